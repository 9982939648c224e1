// The subset of Laravel validation the panel's requests and egg variables use (reference/pterodactyl.md §1.3, §2.2):
// one 422 entry per failed rule per field, `meta.source_field` + `meta.rule`; a failed implicit rule (`required`,
// `present`) stops the field, an absent field skips non-implicit rules, `nullable` lets null through.
import { type ErrorItem, PanelError } from "./wire.ts"

export interface FieldCheck {
  readonly field: string
  /** Display name in messages (`allocation.default`, `Server Jar File variable`). */
  readonly attribute?: string
  readonly rules: string
  /** Whether the key exists in the input (egg variables are always validated as present, §2.2). */
  readonly present: boolean
  readonly value: unknown
  /** Custom checks by rule name (`exists`, `unique`, `p_username`): true when the value passes. */
  readonly custom?: Readonly<Record<string, (value: unknown) => boolean>>
}

const IMPLICIT = new Set(["required", "present", "required_without"])

/** Splits `a|regex:/x|y/|b` keeping a regex's own pipes. */
export const splitRules = (rules: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let rest = rules
  while (rest !== "") {
    if (rest.startsWith("regex:")) {
      const close = rest.lastIndexOf("/")
      const end = rest.indexOf("|", close)
      out.push(end === -1 ? rest : rest.slice(0, end))
      rest = end === -1 ? "" : rest.slice(end + 1)
      continue
    }
    const end = rest.indexOf("|")
    out.push(end === -1 ? rest : rest.slice(0, end))
    rest = end === -1 ? "" : rest.slice(end + 1)
  }
  return out.filter((r) => r !== "")
}

const isEmpty = (v: unknown) =>
  v === null || v === undefined || (typeof v === "string" && v.trim() === "") || (Array.isArray(v) && v.length === 0)

const isNumeric = (v: unknown) =>
  typeof v === "number" ? Number.isFinite(v) : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))

/** Laravel's size: the number itself under `numeric`/`integer`, else string length or array count. */
const sizeOf = (v: unknown, numeric: boolean): number =>
  numeric && isNumeric(v) ? Number(v) : typeof v === "string" ? [...v].length : Array.isArray(v) ? v.length : Number(v)

/** A PHP-style `/pattern/flags` regex literal. */
const phpRegex = (literal: string): RegExp | undefined => {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(literal)
  if (m === null) return undefined
  try {
    return new RegExp(m[1] ?? "", (m[2] ?? "").replace(/[^imsu]/g, ""))
  } catch {
    return undefined
  }
}

const check = (name: string, arg: string | undefined, v: unknown, c: FieldCheck, numeric: boolean): { ok: boolean; message: (a: string) => string } => {
  switch (name) {
    case "required":
    case "required_without":
      return { ok: !isEmpty(v), message: (a) => `The ${a} field is required.` }
    case "present":
      return { ok: c.present, message: (a) => `The ${a} field must be present.` }
    case "string":
      return { ok: typeof v === "string", message: (a) => `The ${a} must be a string.` }
    case "integer":
      return { ok: Number.isInteger(typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v), message: (a) => `The ${a} must be an integer.` }
    case "numeric":
      return { ok: isNumeric(v), message: (a) => `The ${a} must be a number.` }
    case "boolean":
      return { ok: [true, false, 0, 1, "0", "1"].includes(v as never), message: (a) => `The ${a} field must be true or false.` }
    case "array":
      return { ok: typeof v === "object" && v !== null, message: (a) => `The ${a} must be an array.` }
    case "email":
      return { ok: typeof v === "string" && /^[^@\s]+@[^@\s]+$/.test(v), message: (a) => `The ${a} must be a valid email address.` }
    case "max":
      return { ok: sizeOf(v, numeric) <= Number(arg), message: (a) => numeric ? `The ${a} may not be greater than ${arg}.` : `The ${a} may not be greater than ${arg} characters.` }
    case "min":
      return { ok: sizeOf(v, numeric) >= Number(arg), message: (a) => numeric ? `The ${a} must be at least ${arg}.` : `The ${a} must be at least ${arg} characters.` }
    case "between": {
      const [lo = "0", hi = "0"] = (arg ?? "").split(",")
      const n = sizeOf(v, numeric)
      return { ok: n >= Number(lo) && n <= Number(hi), message: (a) => numeric ? `The ${a} must be between ${lo} and ${hi}.` : `The ${a} must be between ${lo} and ${hi} characters.` }
    }
    case "regex": {
      const re = phpRegex(arg ?? "")
      return { ok: typeof v === "string" && re !== undefined && re.test(v), message: (a) => `The ${a} format is invalid.` }
    }
    case "in":
      return { ok: (arg ?? "").split(",").includes(String(v)), message: (a) => `The selected ${a} is invalid.` }
    case "exists":
      return { ok: c.custom?.["exists"]?.(v) ?? true, message: (a) => `The selected ${a} is invalid.` }
    case "unique":
      return { ok: c.custom?.["unique"]?.(v) ?? true, message: (a) => `The ${a} has already been taken.` }
    default: {
      const custom = c.custom?.[name]
      if (custom !== undefined) return { ok: custom(v), message: (a) => `The ${a} is invalid.` }
      return { ok: true, message: () => "" }
    }
  }
}

/** The 422 entries of one field. */
export const checkField = (c: FieldCheck): ReadonlyArray<ErrorItem> => {
  const rules = splitRules(c.rules)
  const attribute = c.attribute ?? c.field.replace(/_/g, " ")
  const errors: Array<ErrorItem> = []
  if (rules.includes("sometimes") && !c.present) return errors
  if (rules.includes("nullable") && c.present && c.value === null) return errors
  const numeric = rules.includes("numeric") || rules.includes("integer")
  for (const rule of rules) {
    const colon = rule.indexOf(":")
    const name = colon === -1 ? rule : rule.slice(0, colon)
    const arg = colon === -1 ? undefined : rule.slice(colon + 1)
    if (name === "sometimes" || name === "nullable" || name === "bail") continue
    // Laravel skips a non-implicit rule for an absent field, and for an empty string that is not required.
    if (!IMPLICIT.has(name) && (!c.present || c.value === undefined || (c.value === null && !rules.includes("required")))) continue
    const result = check(name, arg, c.value, c, numeric)
    if (result.ok) continue
    errors.push({
      code: "ValidationException",
      status: "422",
      detail: result.message(attribute),
      meta: { source_field: c.field, rule: name }
    })
    if (IMPLICIT.has(name) || rules.includes("bail")) break
  }
  return errors
}

/** Throws the 422 listing every failure of every field, in field order. */
export const validate = (checks: ReadonlyArray<FieldCheck>): void => {
  const errors = checks.flatMap(checkField)
  if (errors.length > 0) throw new PanelError(422, errors)
}

/** The value at a dotted path of a JSON body, and whether the key exists. */
export const at = (body: unknown, path: string): { readonly present: boolean; readonly value: unknown } => {
  let cur: unknown = body
  for (const key of path.split(".")) {
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, key)) return { present: false, value: undefined }
    cur = (cur as Record<string, unknown>)[key]
  }
  return { present: true, value: cur }
}
