// Reading the audit log a page at a time: operators read all of it, a customer the security events of their account.
import { Effect } from "effect"
import { AuditLog } from "../../ports/AuditLog.ts"
import type { UserId } from "../account/User.ts"
import { type AuditEvent, type AuditQuery, SECURITY_ACTIONS } from "../audit/AuditEvent.ts"

export interface AuditPage {
  readonly events: ReadonlyArray<AuditEvent>
  /** The cursor of the next page, when there is one. */
  readonly next: string | undefined
}

/** One page (newest first) and whether another follows: one more row is read than shown. */
export const auditPage = Effect.fn("auditPage")(function*(query: AuditQuery) {
  const rows = yield* (yield* AuditLog).list({ ...query, limit: query.limit + 1 })
  const events = rows.slice(0, query.limit)
  return { events, next: rows.length > query.limit ? events.at(-1)?.id : undefined } satisfies AuditPage
})

/** The security events of the customer's own account. */
export const securityEvents = (userId: UserId, page: { readonly before?: string | undefined; readonly limit: number }) =>
  auditPage({ subjectUserId: userId, actions: SECURITY_ACTIONS, before: page.before, limit: page.limit })
