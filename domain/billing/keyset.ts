// Keyset pagination of a customer's lists (newest first): a page ends at its last row, and the next starts strictly
// after that row's time and id, one range of the list's index whatever the page's depth.
import { Result } from "effect"
import { Base64Url } from "effect/encoding"

/** Where a page ended: the last row's time and id. */
export interface Keyset {
  readonly at: Date
  readonly id: string
}

/** The cursor as the client holds it: opaque, `<at ISO>~<id>` in base64url. */
export const encodeKeyset = (at: Date, id: string): string => Base64Url.encode(`${at.toISOString()}~${id}`)

/** A cursor the server did not make names no page: it is read as the first one. */
export const decodeKeyset = (text: string | undefined): Keyset | null => {
  if (text === undefined) return null
  const [time, id] = Result.getOrElse(Base64Url.decodeString(text), () => "").split("~")
  const at = new Date(time ?? "")
  return Number.isNaN(at.getTime()) || id === undefined || !/^[0-9a-f-]{36}$/.test(id) ? null : { at, id }
}

/** One page of `limit` from `found` (read with one more than `limit`: whether another page follows). */
export const pageOf = <A>(found: ReadonlyArray<A>, limit: number, keyOf: (row: A) => Keyset) => {
  const rows = found.slice(0, limit)
  const last = rows[rows.length - 1]
  const next = found.length > limit && last !== undefined ? encodeKeyset(keyOf(last).at, keyOf(last).id) : null
  return { rows, next }
}
