// What a request may carry, decoded once at the edge: ids in paths (a malformed one is answered exactly like a
// missing one) and text without control characters (a NUL reaches neither PostgreSQL, which refuses it in text,
// nor bcrypt, which stops reading at it, nor an upstream).
import { Context, Schema } from "effect"
import type { NotFound } from "./ApiErrors.ts"

/** C0 controls and DEL: nothing a form field holds. (The `u` flag lets the pattern appear in the OpenAPI document.) */
const SINGLE_LINE = /^[^\u0000-\u001F\u007F]*$/u
/** The same, with tab and line breaks allowed: free text written on several lines. */
const MULTI_LINE = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]*$/u

export const CONTROL_MESSAGE = "must not contain control characters"
const MULTI_LINE_MESSAGE = "must not contain control characters other than tabs and line breaks"

/** A one-line text field of at most `max` characters (every text field of a request body but free text). */
export const Line = (max: number) =>
  Schema.String.check(Schema.isMaxLength(max), Schema.isPattern(SINGLE_LINE, { message: CONTROL_MESSAGE }))

/** The query of a list read a page at a time: the cursor of the page before (`next`), and the page's size (1–100). */
export const PageQuery = {
  after: Schema.optionalKey(Line(200)),
  limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 })))
}

/** Free text of at most `max` characters, which may span several lines. */
export const Lines = (max: number) =>
  Schema.String.check(Schema.isMaxLength(max), Schema.isPattern(MULTI_LINE, { message: MULTI_LINE_MESSAGE }))

interface Visit {
  readonly value: unknown
  readonly key: PropertyKey | undefined
  readonly parent: Visit | undefined
}

const pathOf = (visit: Visit, last?: PropertyKey): ReadonlyArray<PropertyKey> => {
  const path: Array<PropertyKey> = last === undefined ? [] : [last]
  for (let v: Visit | undefined = visit; v?.key !== undefined; v = v.parent) path.unshift(v.key)
  return path
}

/**
 * The path to the first string (key or value, at any depth) holding a control character, if any. Iterative, each
 * step knowing only its parent: a body nested thousands deep is walked without exhausting the stack or the memory.
 */
export const firstControl = (value: unknown): ReadonlyArray<PropertyKey> | undefined => {
  const pending: Array<Visit> = [{ value, key: undefined, parent: undefined }]
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const current = visit.value
    if (typeof current === "string") {
      if (!SINGLE_LINE.test(current)) return pathOf(visit)
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], key: i, parent: visit })
    } else if (current !== null && typeof current === "object") {
      const entries = Object.entries(current)
      for (const [key] of entries) if (!SINGLE_LINE.test(key)) return pathOf(visit, key)
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], key: entries[i]![0], parent: visit })
    }
  }
  return undefined
}

/** A free-form JSON value (checked further by the domain) whose strings all follow `Line`'s rule. */
export const noControlInside = Schema.makeFilter((value: unknown) => {
  const path = firstControl(value)
  return path === undefined ? true : { path, issue: CONTROL_MESSAGE }
})

/**
 * A database id in a path. The shape PostgreSQL's `uuid` reads (8-4-4-4-12 hex digits, any version): anything else
 * cannot name a row, and is answered as the route's missing resource (see MissingAnswer).
 */
export const PathId = Schema.String.check(Schema.isGUID())

/** A panel server's `identifier` in a path: the first 8 hex digits of its UUID (reference/pterodactyl.md §5). */
export const ServerIdentifier = Schema.String.check(Schema.isPattern(/^[0-9a-f]{8}$/u))
export const isServerIdentifier = Schema.is(ServerIdentifier)

/**
 * What the routes of a group answer when their path id names nothing of the caller's. Request validation answers a
 * malformed id with it too, so "not an id" and "no such id" cannot be told apart.
 */
export class MissingAnswer extends Context.Service<MissingAnswer, NotFound>()("zh/http/MissingAnswer") {}
