// What operators read and do about a customer: search, the customer's page (each view audited), and ending all of a
// customer's sessions (admin only, audited in the same transaction).
import { Clock, Effect, Option, Schema } from "effect"
import { SessionRecords } from "../../ports/SessionRecords.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import type { Role } from "../account/Role.ts"
import type { UserId } from "../account/User.ts"
import { type AuditExtra, type AuditInput, recordAudit } from "../audit/record.ts"
import { auditPage } from "./auditTrail.ts"

export class CustomerNotFound extends Schema.TaggedError<CustomerNotFound>()("CustomerNotFound", {}) {
  override get message() { return "No such customer." }
}

/** The operator at work: who they are, in which role, from which address. */
export interface Operator {
  readonly id: UserId
  readonly role: Role
  readonly address: string | null
}

/** At most this many matches: a search narrows, it does not list the base. */
export const SEARCH_LIMIT = 50

/** Customers whose e-mail, first or last name, company or SIRET starts with `query` (case-insensitive). */
export const searchCustomers = Effect.fn("searchCustomers")(function*(query: string) {
  return yield* (yield* Users).search(query.trim().toLowerCase(), SEARCH_LIMIT)
})

/** The trail's event of the operator's `action` on the customer `id`, from where the operator works. */
const operatorActed = (operator: Operator, id: UserId, action: AuditInput["action"], change: Pick<AuditExtra, "before" | "after"> = {}) =>
  recordAudit({
    actorId: operator.id,
    actorRole: operator.role,
    action,
    subjectUserId: id,
    target: { type: "user", id },
    address: operator.address,
    ...change
  })

export const findCustomer = Effect.fnUntraced(function*(id: UserId) {
  const found = yield* (yield* Users).findById(id)
  if (Option.isNone(found)) return yield* new CustomerNotFound()
  return found.value
})

/** The customer's page: the account, its live sessions, its subscriptions and the latest of its trail. */
export const customerPage = Effect.fn("customerPage")(function*(operator: Operator, id: UserId) {
  const customer = yield* findCustomer(id)
  const now = new Date(yield* Clock.currentTimeMillis)
  const [sessions, subscriptions, audit] = yield* Effect.all([
    (yield* SessionRecords).listOf(id, now),
    (yield* Subscriptions).forUser(id),
    auditPage({ subjectUserId: id, limit: 20 })
  ], { concurrency: "unbounded" })
  // Reading a customer's data is itself accountable (who looked, when, from where).
  yield* operatorActed(operator, id, "staff.customer_viewed")
  return { customer, sessions, subscriptions, audit }
})

/** Ends every session of the customer (a stolen cookie, a compromised account); the count is kept in the log. */
export const endCustomerSessions = Effect.fn("endCustomerSessions")(function*(operator: Operator, id: UserId) {
  yield* findCustomer(id)
  const sessions = yield* SessionRecords
  yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const ended = yield* sessions.endAllOf(id)
    yield* operatorActed(operator, id, "staff.sessions_ended", { before: { sessions: ended }, after: { sessions: 0 } })
  }))
})

