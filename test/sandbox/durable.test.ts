// Specification of how a sandbox's saved document is read (adapters/proxmox/sandbox/durable.ts): JSON, then the schema, with a
// failure that says briefly what is wrong and where.
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { decodeDocument } from "../../adapters/proxmox/sandbox/durable.ts"

const Doc = Schema.Struct({ version: Schema.Literal(1), items: Schema.Array(Schema.Struct({ id: Schema.Int })) })

describe("reading a saved document", () => {
  it("decodes a valid document", () => {
    expect(decodeDocument(Doc, `{"version":1,"items":[{"id":3}]}`)).toEqual(Result.succeed({ version: 1, items: [{ id: 3 }] }))
  })

  it("text that is not JSON fails as such", () => {
    expect(decodeDocument(Doc, "{")).toEqual(Result.fail("not valid JSON"))
  })

  it("schema issues are listed with their paths, at most five", () => {
    const items = Array.from({ length: 8 }, () => ({ id: "x" }))
    const decoded = decodeDocument(Doc, JSON.stringify({ version: 1, items }))
    if (Result.isSuccess(decoded)) throw new Error("decoded an invalid document")
    const issues = decoded.failure.split("; ")
    expect(issues).toHaveLength(5)
    expect(issues[0]).toMatch(/^items\.0\.id: /)
  })
})
