// "View as customer": what the customer's panel shows them (subscriptions with their services, renewals, VPS, game
// servers, the latest invoices), read by the very use cases of their panel for their account, for an operator. It
// is a read of its own (one GET under /api/admin): the operator holds no session of the customer's, so nothing
// the panel could change is reachable from it. Each view is audited (`admin.view_as`, the customer as its target).
import { Effect } from "effect"
import type { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import { listInvoices } from "../billing/invoicing/viewInvoices.ts"
import { renewalStatuses } from "../billing/renewalStatus.ts"
import { listSubscriptionsWithServices } from "../billing/subscriptionList.ts"
import { listGameServers } from "../game/GameActions.ts"
import { listVps } from "../vps/VpsActions.ts"
import { findCustomer, type Operator } from "./customers.ts"

/** The latest invoices shown (the panel's first page). */
const INVOICES = 20

export const viewAsCustomer = Effect.fn("viewAsCustomer")(function*(operator: Operator, id: UserId) {
  const customer = yield* findCustomer(id)
  const [subscriptions, renewals, vps, gameServers, invoices] = yield* Effect.all([
    listSubscriptionsWithServices(id),
    renewalStatuses(id),
    listVps(id),
    listGameServers(id),
    listInvoices(id, undefined, INVOICES)
  ], { concurrency: "unbounded" })
  yield* recordAudit({
    actorId: operator.id,
    actorRole: operator.role,
    action: "admin.view_as",
    subjectUserId: id,
    target: { type: "user", id },
    address: operator.address
  })
  return { customer, subscriptions, renewals, vps, gameServers, invoices: invoices.invoices }
})
