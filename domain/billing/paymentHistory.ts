// The customer's payments as our ledger records them: charges (first months and renewals) and refunds, a page at a
// time, newest first (keyset: after the last one's time and id).
import { Effect } from "effect"
import { Ledger } from "../../ports/Ledger.ts"
import { decodeKeyset, pageOf } from "./keyset.ts"

/** The page size when the client names none: what the history showed before it had pages. */
export const PAYMENTS_PAGE = 100

export const listPayments = Effect.fn("listPayments")(function*(userId: string, after: string | undefined, limit = PAYMENTS_PAGE) {
  const found = yield* (yield* Ledger).forUser(userId, decodeKeyset(after), limit + 1)
  const { next, rows } = pageOf(found, limit, (e) => ({ at: e.createdAt, id: e.id }))
  return { payments: rows, next }
})
