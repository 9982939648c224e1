// The saved card and the page to change it; Stripe's webhook, verified and recorded by billing (a refusal is logged
// without the payload).
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { LedgerEntry } from "../../domain/billing/Billing.ts"
import { listPayments } from "../../domain/billing/paymentHistory.ts"
import { cardUpdatePage, savedCardOf } from "../../domain/billing/paymentMethod.ts"
import { receivePaymentNotification } from "../../domain/billing/paymentNotifications.ts"
import { countSignal } from "../../domain/ops/alerting.ts"
import type { OpsRecords } from "../../ports/OpsRecords.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"

export const PaymentsHandlers = HttpApiBuilder.group(Api, "payments", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Effect.Services<ReturnType<typeof receivePaymentNotification>> | OpsRecords>()
  return handlers.handle("stripeWebhook", ({ headers, payload }) =>
    receivePaymentNotification({ payload, signature: headers["stripe-signature"] ?? "" }).pipe(
      Effect.tapError((e) =>
        Effect.logWarning(`Stripe webhook refused (${e._tag}); ${payload.byteLength} bytes, payload not logged`)
      ),
      // Counted for the operators' rate alert (a misconfigured secret, or someone forging notifications).
      Effect.tapErrorTag("NotificationSignatureInvalid", () =>
        countSignal("webhook_signature_failure").pipe(
          Effect.catchCause((cause) => Effect.logWarning("a refused webhook was not counted", cause))
        )),
      Effect.map((receipt) => ({ received: true as const, ...receipt })),
      Effect.provideContext(services),
      mapDomainErrors
    ))
}))

/** The card page brings the customer back to the panel's preferences page. */
export const PaymentMethodHandlers = (publicUrl: string) =>
  HttpApiBuilder.group(Api, "paymentMethod", Effect.fn(function*(handlers) {
    const services = yield* Effect.context<
      Effect.Services<ReturnType<typeof savedCardOf>> | Effect.Services<ReturnType<typeof cardUpdatePage>>
    >()
    return handlers
      .handle("get", () =>
        Effect.flatMap(CurrentSession, (session) => savedCardOf(session.user.id)).pipe(Effect.provideContext(services), mapDomainErrors))
      .handle("update", () =>
        Effect.flatMap(CurrentSession, (session) =>
          cardUpdatePage(session.user, `${publicUrl.replace(/\/$/, "")}/preferences`)).pipe(Effect.provideContext(services), mapDomainErrors))
  }))

/** A ledger entry as the customer's history (and the back-office's) shows it. */
export const paymentView = (e: LedgerEntry) => ({
  id: e.id,
  kind: e.kind,
  amountCents: e.amountCents,
  orderId: e.orderId,
  subscriptionId: e.subscriptionId,
  createdAt: e.createdAt.toISOString()
})

export const PaymentHistoryHandlers = HttpApiBuilder.group(Api, "paymentHistory", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Effect.Services<ReturnType<typeof listPayments>>>()
  return handlers.handle("list", ({ query }) =>
    Effect.flatMap(CurrentSession, (session) => listPayments(session.user.id, query.after, query.limit)).pipe(
      Effect.map(({ next, payments }) => ({ ...(next === null ? {} : { next }), payments: payments.map(paymentView) })),
      Effect.provideContext(services),
      mapDomainErrors
    ))
}))
