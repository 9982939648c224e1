// What operators read and do about a customer: search, the customer's page (each view audited), and ending all of a
// customer's sessions (admin only, audited in the same transaction).
import { Clock, Effect, Option, Schema } from "effect"
import { BillingProfiles } from "../../ports/BillingProfiles.ts"
import { CustomerReferences } from "../../ports/CustomerReferences.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import type { Role } from "../account/Role.ts"
import { UserId } from "../account/User.ts"
import { type AuditExtra, type AuditInput, recordAudit } from "../audit/record.ts"
import { listInvoices } from "../billing/invoicing/viewInvoices.ts"
import { decodeKeyset, pageOf } from "../billing/keyset.ts"
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

/**
 * Customers whose e-mail, first or last name, company or SIRET starts with `query` (case-insensitive), then those
 * `query` names exactly as a reference: an invoice or credit-note number, a VPS's IP or a game server's address.
 */
export const searchCustomers = Effect.fn("searchCustomers")(function*(query: string) {
  const users = yield* Users
  const [byName, holders] = yield* Effect.all([
    users.search(query.trim().toLowerCase(), SEARCH_LIMIT),
    (yield* CustomerReferences).holders(query.trim(), SEARCH_LIMIT)
  ], { concurrency: "unbounded" })
  const known = new Set(byName.map((u) => u.id))
  const more = yield* Effect.forEach(holders.filter((id) => !known.has(UserId.make(id))), (id) => users.findById(UserId.make(id)),
    { concurrency: 4 })
  return [...more.flatMap((found) => Option.isSome(found) ? [found.value] : []), ...byName].slice(0, SEARCH_LIMIT)
})

/** The trail's event of the operator's `action` on the customer `id`, from where the operator works. */
export const operatorActed = (operator: Operator, id: UserId, action: AuditInput["action"], change: Pick<AuditExtra, "before" | "after"> = {}) =>
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

/** The invoices and credit notes shown at once on a customer's page (more: a page at a time, by keyset). */
export const INVOICE_PAGE = 20

/** The orders shown at once on a customer's page (more: a page at a time, by keyset). */
export const ORDER_PAGE = 20

/**
 * The customer's orders, newest first, `limit` after the cursor `after` (one range of orders_user_created), each with
 * when it was paid (one read of the ledger for the page).
 */
const listOrders = Effect.fnUntraced(function*(id: UserId, after: string | undefined, limit: number) {
  // One more than asked says whether another page follows.
  const found = yield* (yield* Orders).ofCustomer(id, decodeKeyset(after), limit + 1)
  const { next, rows } = pageOf(found, limit, (o) => ({ at: o.createdAt, id: o.id }))
  const paid = yield* (yield* Ledger).paidAt(rows.map((o) => o.id))
  return { orders: rows.map((order) => ({ order, paidAt: Option.fromNullishOr(paid.get(order.id)) })), next }
})

/**
 * The customer's page: the account, its billing details (as saved: null before the first save), its live sessions,
 * its subscriptions, its latest invoices and credit notes, and the latest of its trail.
 */
export const customerPage = Effect.fn("customerPage")(function*(operator: Operator, id: UserId) {
  const customer = yield* findCustomer(id)
  const now = new Date(yield* Clock.currentTimeMillis)
  const [sessions, subscriptions, audit, billingProfile, invoices, orders] = yield* Effect.all([
    (yield* SessionRecords).listOf(id, now),
    (yield* Subscriptions).forUser(id),
    auditPage({ subjectUserId: id, limit: 20 }),
    (yield* BillingProfiles).get(id),
    listInvoices(id, undefined, INVOICE_PAGE),
    listOrders(id, undefined, ORDER_PAGE)
  ], { concurrency: "unbounded" })
  // Reading a customer's data is itself accountable (who looked, when, from where).
  yield* operatorActed(operator, id, "staff.customer_viewed")
  return { customer, sessions, subscriptions, audit, billingProfile, invoices, orders }
})

/** Older orders of the customer, a page at a time (the page's own view is what is audited). */
export const customerOrders = Effect.fn("customerOrders")(function*(id: UserId, after: string | undefined, limit: number) {
  yield* findCustomer(id)
  return yield* listOrders(id, after, limit)
})

/** Older invoices and credit notes of the customer, a page at a time (the page's own view is what is audited). */
export const customerInvoices = Effect.fn("customerInvoices")(function*(id: UserId, after: string | undefined, limit: number) {
  yield* findCustomer(id)
  return yield* listInvoices(id, after, limit)
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

