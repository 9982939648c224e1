// Thin handlers for the back-office's operations: one use case each, the operator taken from the session, errors in
// one table.
import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { UserId } from "../../domain/account/User.ts"
import { customerNotices, resendNotice } from "../../domain/backoffice/notices.ts"
import { customerPayments, issueRefund } from "../../domain/backoffice/refunds.ts"
import { suspendService, terminateService, unsuspendService } from "../../domain/backoffice/serviceHolds.ts"
import { retryOrder } from "../../domain/backoffice/orderRetry.ts"
import { reconcileService, resumeProvisioning, servicePage } from "../../domain/backoffice/servicePage.ts"
import type { Order } from "../../domain/billing/Billing.ts"
import type { ServiceInspection } from "../../domain/billing/HostedService.ts"
import type { ServiceHold } from "../../domain/billing/ServiceHold.ts"
import { Orders } from "../../ports/Orders.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { currentOperator, withServices } from "./operator.ts"
import { paymentView } from "./PaymentsHandlers.ts"
import { orderView, subscriptionView } from "./ServicesHandlers.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const holdView = (hold: ServiceHold) => ({
  id: hold.id,
  facts: hold.facts,
  ground: hold.ground,
  placedBy: hold.placedBy,
  placedAt: hold.placedAt.toISOString(),
  liftedBy: hold.liftedBy,
  liftedAt: iso(hold.liftedAt),
  liftReason: hold.liftReason
})

export const staffOrderView = (o: Order) => ({
  ...orderView(o),
  userId: o.userId,
  updatedAt: o.updatedAt.toISOString(),
  ...(o.retriedAs === null ? {} : { retriedAs: o.retriedAs })
})

const upstreamView = (live: ServiceInspection) =>
  live.reachable
    ? { ...live, facts: live.facts.map(([label, value]) => ({ label, value })) }
    : live

/** The failed orders an operator's list shows at most. */
const FAILED_ORDERS = 100

export const AdminServicesHandlers = HttpApiBuilder.group(Api, "adminServices", Effect.fn(function*(handlers) {
  const operator = currentOperator(yield* HttpSettings)
  const run = yield* withServices<
    | Effect.Services<ReturnType<typeof servicePage>>
    | Effect.Services<ReturnType<typeof suspendService>>
    | Effect.Services<ReturnType<typeof unsuspendService>>
    | Effect.Services<ReturnType<typeof terminateService>>
    | Effect.Services<ReturnType<typeof reconcileService>>
    | Effect.Services<ReturnType<typeof resumeProvisioning>>
  >()
  return handlers
    .handle("get", ({ params }) =>
      run(servicePage(params.id)).pipe(
        Effect.map((page) => ({
          subscription: subscriptionView(page.subscription),
          customerId: page.subscription.userId,
          service: Option.getOrNull(page.service),
          upstream: Option.getOrNull(Option.map(page.upstream, upstreamView)),
          provisioning: Option.getOrNull(Option.map(page.order, ({ order, steps }) => ({ order: staffOrderView(order), steps }))),
          hold: Option.getOrNull(Option.map(page.hold, holdView)),
          holds: page.holds.map(holdView)
        })),
        mapDomainErrors
      ))
    .handle("suspend", ({ params, payload }) =>
      Effect.flatMap(operator, (who) => run(suspendService(who, params.id, payload))).pipe(Effect.map(holdView), mapDomainErrors))
    .handle("unsuspend", ({ params, payload }) =>
      Effect.flatMap(operator, (who) => run(unsuspendService(who, params.id, payload.reason))).pipe(Effect.map(holdView), mapDomainErrors))
    .handle("terminate", ({ params, payload }) =>
      Effect.flatMap(operator, (who) => run(terminateService(who, params.id, payload.reason))).pipe(mapDomainErrors))
    .handle("reconcile", ({ params }) =>
      run(reconcileService(params.id)).pipe(Effect.map((r) => ({ at: r.at.toISOString(), findings: r.findings })), mapDomainErrors))
    .handle("resumeProvisioning", ({ params }) =>
      Effect.flatMap(operator, (who) => run(resumeProvisioning(who, params.id))).pipe(Effect.map(staffOrderView), mapDomainErrors))
}))

export const AdminMoneyHandlers = HttpApiBuilder.group(Api, "adminMoney", Effect.fn(function*(handlers) {
  const operator = currentOperator(yield* HttpSettings)
  const orders = yield* Orders
  const run = yield* withServices<
    | Effect.Services<ReturnType<typeof customerPayments>>
    | Effect.Services<ReturnType<typeof issueRefund>>
    | Effect.Services<ReturnType<typeof customerNotices>>
    | Effect.Services<ReturnType<typeof resendNotice>>
    | Effect.Services<ReturnType<typeof retryOrder>>
  >()
  return handlers
    .handle("failedOrders", () =>
      orders.failed(FAILED_ORDERS).pipe(
        Effect.map((failed) => ({
          orders: failed.map(staffOrderView)
        })),
        mapDomainErrors
      ))
    .handle("retryOrder", ({ params }) =>
      Effect.flatMap(operator, (who) => run(retryOrder(who, params.id))).pipe(Effect.map(staffOrderView), mapDomainErrors))
    .handle("payments", ({ params }) =>
      run(customerPayments(UserId.make(params.id))).pipe(
        Effect.map((rows) => ({
          payments: rows.map(({ entry, refundableCents }) => ({
            ...paymentView(entry),
            ...Option.match(refundableCents, { onNone: () => ({}), onSome: (cents) => ({ refundableCents: cents }) })
          }))
        })),
        mapDomainErrors
      ))
    .handle("refund", ({ params, payload }) =>
      Effect.flatMap(operator, (who) => run(issueRefund(who, { chargeId: params.id, ...payload }))).pipe(mapDomainErrors))
    .handle("notices", ({ params }) =>
      run(customerNotices(UserId.make(params.id))).pipe(
        Effect.map((notices) => ({
          notices: notices.map((n) => ({
            key: n.key,
            tag: n.tag,
            createdAt: n.createdAt.toISOString(),
            sentAt: iso(n.sentAt),
            attempts: n.attempts,
            lastError: n.lastError
          }))
        })),
        mapDomainErrors
      ))
    .handle("resendNotice", ({ payload }) => Effect.flatMap(operator, (who) => run(resendNotice(who, payload.key))).pipe(mapDomainErrors))
}))
