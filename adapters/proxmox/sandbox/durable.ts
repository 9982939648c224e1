// Reading the sandbox PVE's saved document: the JSON parse and the Effect Schema decode its state file goes
// through, with the schema's complaints turned into the one-line reason its warning gives.
import { Result, Schema, SchemaIssue } from "effect"

/** The warning stays one readable line: the first issues say enough to find the rest. */
const MAX_ISSUES = 5

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathText = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined) =>
  (path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".")

/** Parses `text` as JSON and decodes it with `schema`; the failure says what is wrong (at most 5 issues, with paths). */
export const decodeDocument = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  text: string
): Result.Result<S["Type"], string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Result.fail("not valid JSON")
  }
  const decoded = Schema.decodeUnknownResult(schema)(json, { errors: "all" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const issues = formatter(decoded.failure.issue).issues
  return Result.fail(issues.slice(0, MAX_ISSUES).map((i) => {
    const at = pathText(i.path)
    return at === "" ? i.message : `${at}: ${i.message}`
  }).join("; "))
}
