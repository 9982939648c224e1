// The automatic renewal and its dunning: at each period's end the saved card is charged while the customer is away; a
// decline is tried again inside the grace window (RenewalSettings.retryAfter), a bank asking for the customer gets a
// hosted page, and whatever pays the period — a retry, the page, the panel — extends it once and brings a suspended
// service back. The record of each period (ports/Renewals.ts) is what makes a pass run twice, or two at once, act once.
import { Clock, Duration, Effect, Option } from "effect"
import { SecureRandom } from "effect/crypto"
import { PaymentCustomers } from "../../ports/PaymentCustomers.ts"
import { PaymentGateway, type PaymentNotification } from "../../ports/PaymentGateway.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { type RenewalRecord, Renewals } from "../../ports/Renewals.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { type CustomerNotice, type NoticeService, Notices } from "../notices/CustomerNotice.ts"
import { addMonth, type Subscription } from "./Billing.ts"
import { HostedServices } from "./HostedService.ts"
import { billedUser, quotePlanMonth, recordCharge, recordRefund } from "./invoicing/issueDocuments.ts"
import { RenewalSettings } from "./RenewalSettings.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import { countPayment } from "../ops/metrics.ts"

/**
 * The charge's idempotency key for the attempt made after `attempts` recorded failures. The first names the period
 * alone (`renew:<subscription>:<period start>`, the key the manual renewal shares); each attempt after a recorded
 * decline adds its number, since a provider replays a declined answer for a key it has seen. An attempt whose outcome
 * was never recorded (the process died) is made again with its own key: charged once.
 */
export const renewalKey = (subscriptionId: string, periodStart: Date, attempts: number) =>
  `renew:${subscriptionId}:${periodStart.toISOString()}${attempts === 0 ? "" : `:${attempts + 1}`}`

/** The subscription's plan, retired ones included (a renewal bills it). */
export const planOf = (subscription: Subscription) =>
  Effect.gen(function*() {
    const product = yield* (yield* HostedServices).of(subscription.kind)
    const plan = yield* product.plan(subscription.planId)
    if (Option.isNone(plan)) return yield* Effect.die(new Error(`plan ${subscription.planId} of subscription ${subscription.id} is unknown`))
    return plan.value
  })

const noticeService = (subscription: Subscription, planName: string): NoticeService => ({
  subscriptionId: subscription.id,
  kind: subscription.kind,
  planName
})

/** When the service of a period left unpaid ends: the product's grace window after the period's start. */
export const endsAt = (subscription: Subscription, periodStart: Date) =>
  Effect.map(RenewalSettings, (settings) => new Date(periodStart.getTime() + Duration.toMillis(settings.gracePeriod(subscription.kind))))

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The month from `periodStart` (from now when the service lapsed) that paying the period buys. */
const paidMonth = (periodStart: Date, at: Date) => {
  const start = periodStart.getTime() > at.getTime() ? periodStart : at
  return { start, end: addMonth(start) }
}

/**
 * The period's record, opened the first time it is needed, at the plan's price for this customer (including the VAT
 * their billing profile calls for; a subscription without a profile is billed as its account, never refused). The
 * amount is fixed when the record opens: the reminder, every attempt and the page charge the same.
 */
const periodOf = (subscription: Subscription) =>
  Effect.gen(function*() {
    const plan = yield* planOf(subscription)
    const renewals = yield* Renewals
    const at = yield* now
    const opened = yield* renewals.get(subscription.id, subscription.currentPeriodEnd)
    if (Option.isSome(opened)) return { plan, record: opened.value }
    const record = yield* renewals.open({
      subscriptionId: subscription.id,
      periodStart: subscription.currentPeriodEnd,
      amountCents: yield* renewalPrice(subscription, plan, at),
      now: at
    })
    return { plan, record }
  })

/**
 * What renewing `subscription` for a month costs its customer now, VAT included as their billing profile calls for (a
 * subscription without a profile: as its account, never refused). `recheckVat` asks VIES again about a number it
 * could not check (not for a page that only shows the price).
 */
export const renewalPrice = (subscription: Subscription, plan: RenewedPlan, at: Date, recheckVat = true) =>
  Effect.map(
    Effect.flatMap(billedUser(subscription.userId), (user) =>
      quotePlanMonth(user, plan, paidMonth(subscription.currentPeriodEnd, at), { agreed: true, recheckVat })),
    (quote) => quote.amounts.totalIncludingVatCents
  )

/**
 * The user's customer at the provider. A user without one was charged under their own id (orders paid before billing
 * kept customers: the sandbox gateway's); a real provider knows no such customer, which is "no saved card".
 */
const customerOfUser = (userId: string) =>
  Effect.map(Effect.flatMap(PaymentCustomers, (customers) => customers.get(userId)), Option.getOrElse(() => userId))

/** Charges the saved card for the period's next attempt. */
const chargeSavedCard = (subscription: Subscription, record: RenewalRecord, planName: string) =>
  Effect.gen(function*() {
    return yield* (yield* PaymentGateway).charge({
      customer: yield* customerOfUser(subscription.userId),
      amountCents: record.amountCents,
      description: `${planName}, renewal`,
      idempotencyKey: renewalKey(subscription.id, record.periodStart, record.attempts)
    })
  })

/**
 * The period is paid by `payment`: in one transaction (after `guard`, which records the notification that said so, when
 * one did) the period extended (from its start, or from now when the service had lapsed), the charge in the ledger and
 * the record marked paid. Then the product brings a suspended service back and the customer gets the receipt. A
 * payment for a period something else paid already (the page and a retry both went through) is given back.
 */
const settle = <R = never>(
  subscription: Subscription,
  record: RenewalRecord,
  plan: RenewedPlan,
  payment: { readonly reference: string; readonly amountCents: number },
  guard: Effect.Effect<boolean, DatabaseUnavailable, R> = Effect.succeed(true)
) =>
  Effect.gen(function*() {
    const at = yield* now
    const periodStart = record.periodStart
    const month = paidMonth(periodStart, at)
    const paidUntil = month.end
    const planName = plan.name
    const charge = yield* chargeOf(subscription, plan, payment, at, month)
    const outcome = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
      if (!(yield* guard)) return "duplicate" as const
      if (!(yield* (yield* Subscriptions).extend(subscription.id, periodStart, paidUntil))) return "not-needed" as const
      // The charge in the ledger and its invoice, with the period's extension.
      const invoice = yield* charge
      yield* (yield* Renewals).markPaid(subscription.id, periodStart, payment.reference, at)
      // Paying for a period means going on with it.
      yield* (yield* Subscriptions).setCancelAtPeriodEnd(subscription.id, false)
      yield* auditPayment(subscription, "payment.succeeded", { payment: payment.reference, amountCents: payment.amountCents })
      return { invoiceId: Option.match(invoice, { onNone: () => null, onSome: (i) => i.id }) }
    }))
    if (outcome === "not-needed") {
      const current = yield* (yield* Renewals).get(subscription.id, periodStart)
      const paidBy = Option.isSome(current) ? current.value.chargeReference : null
      // The same payment seen twice (a retried pass, a replayed key): nothing more to do.
      if (paidBy !== payment.reference) yield* giveBack(subscription, charge, payment)
    }
    if (typeof outcome === "string") return outcome
    yield* countPayment("renewal", "succeeded")
    yield* (yield* (yield* HostedServices).of(subscription.kind)).resume(subscription.id, periodStart)
    yield* (yield* Notices).send({
      _tag: "RenewalPaid",
      userId: subscription.userId,
      service: noticeService(subscription, planName),
      periodStart,
      paidUntil,
      amountCents: payment.amountCents,
      invoiceId: outcome.invoiceId
    })
    return "renewed" as const
  })

/** A renewal's payment in the customer's trail (the platform charged it: a system action). */
const auditPayment = (subscription: Subscription, action: "payment.succeeded" | "payment.failed", details: Record<string, unknown>) =>
  recordAudit({
    actorId: null,
    actorRole: "system",
    action,
    subjectUserId: UserId.make(subscription.userId),
    target: { type: "subscription", id: subscription.id },
    details: { kind: "renewal", ...details }
  })

/** A plan as a renewal bills it. */
type RenewedPlan = { readonly name: string; readonly priceCents: number }

/**
 * Recording `payment` of `subscription` (the ledger entry and its invoice, to run in a transaction), priced before the
 * transaction (VIES may be asked again) for the month it pays.
 */
const chargeOf = (
  subscription: Subscription,
  plan: RenewedPlan,
  payment: { readonly reference: string; readonly amountCents: number },
  at: Date,
  month: { readonly start: Date; readonly end: Date }
) =>
  Effect.gen(function*() {
    const quote = yield* quotePlanMonth(yield* billedUser(subscription.userId), plan, month, { agreed: true })
    const entryId = yield* (yield* SecureRandom.SecureRandom).uuidV4()
    return recordCharge({
      id: entryId,
      userId: subscription.userId,
      subscriptionId: subscription.id,
      orderId: null,
      kind: "charge",
      amountCents: payment.amountCents,
      reference: payment.reference,
      createdAt: at
    }, quote)
  })

/**
 * A payment nothing needs any more (its period was paid otherwise, or its service is gone) goes back, once: it is
 * recorded and invoiced (money was taken), refunded under the key `refund:<payment>`, and the refund recorded with its
 * credit note. A replay finds each step done (the ledger's references, the gateway's key).
 */
const giveBack = <E, R>(
  subscription: Subscription,
  charge: Effect.Effect<unknown, E, R>,
  payment: { readonly reference: string; readonly amountCents: number }
) =>
  Effect.gen(function*() {
    const unitOfWork = yield* UnitOfWork
    yield* unitOfWork.transaction(charge)
    const refund = yield* (yield* PaymentGateway).refund({
      charge: payment.reference,
      amountCents: payment.amountCents,
      idempotencyKey: `refund:${payment.reference}`
    })
    yield* countPayment("refund", "refunded")
    yield* Effect.logWarning(`renewal payment ${payment.reference} of subscription ${subscription.id} was not needed: refunded`)
    const entry = {
      id: yield* (yield* SecureRandom.SecureRandom).uuidV4(),
      userId: subscription.userId,
      subscriptionId: subscription.id,
      orderId: null,
      kind: "refund" as const,
      amountCents: payment.amountCents,
      reference: `${payment.reference}:${refund.reference}`,
      createdAt: yield* now
    }
    // The refund, its credit note and its notice together (the e-mail, with the credit note, after the commit).
    yield* unitOfWork.transaction(Effect.gen(function*() {
      const credit = yield* recordRefund(entry, payment.reference)
      yield* (yield* Notices).send({
        _tag: "RefundIssued",
        userId: subscription.userId,
        refundId: refund.reference,
        amountCents: payment.amountCents,
        reason: "This period was already paid.",
        creditNoteId: Option.match(credit, { onNone: () => null, onSome: (c) => c.id })
      })
    }))
  })

/** The outcome of one automatic attempt, recorded once (a compare-and-set on the failures so far), and told. */
const attempt = (subscription: Subscription, record: RenewalRecord, plan: RenewedPlan) =>
  Effect.gen(function*() {
    const planName = plan.name
    const renewals = yield* Renewals
    const settings = yield* RenewalSettings
    const charged = yield* Effect.result(chargeSavedCard(subscription, record, planName))
    if (charged._tag === "Success") {
      yield* settle(subscription, record, plan, { reference: charged.success.reference, amountCents: record.amountCents })
      return
    }
    const failure = charged.failure
    const at = yield* now
    const ends = yield* endsAt(subscription, record.periodStart)
    const service = noticeService(subscription, planName)
    switch (failure._tag) {
      case "PaymentUnavailable":
        // Nothing is known to have happened: the next pass tries the same attempt, with the same key.
        yield* renewals.release(subscription.id, record.periodStart)
        return yield* Effect.logWarning(`renewing subscription ${subscription.id}: the payment service is unavailable, retrying`)
      case "PaymentAuthenticationRequired": {
        yield* countPayment("renewal", "auth_required")
        yield* auditPayment(subscription, "payment.failed", { amountCents: record.amountCents, reason: "authentication required" })
        const page = yield* pageFor(subscription, record, planName, `renew-page:${subscription.id}:${record.periodStart.toISOString()}`)
        return yield* recordOnce(record, at, { status: "awaiting_authentication", reason: "authentication required", nextAttemptAt: null, payUrl: page.url }, {
          _tag: "AuthenticationNeeded",
          userId: subscription.userId,
          service,
          periodStart: record.periodStart,
          amountCents: record.amountCents,
          payUrl: page.url
        })
      }
      case "PaymentDeclined": {
        yield* countPayment("renewal", "declined")
        yield* auditPayment(subscription, "payment.failed", { amountCents: record.amountCents, reason: failure.reason })
        // The next retry of the schedule still ahead (a period first tried late — the sweep down for days — does not
        // fire its missed retries one pass after another), inside the grace window.
        const next = settings.retryAfter.slice(record.attempts)
          .map((offset) => new Date(record.periodStart.getTime() + Duration.toMillis(offset)))
          .find((time) => time.getTime() > at.getTime())
        const nextAttemptAt = next !== undefined && next.getTime() < ends.getTime() ? next : null
        const status = nextAttemptAt === null ? "failed" : "retrying"
        return yield* recordOnce(record, at, { status, reason: failure.reason, nextAttemptAt, payUrl: null }, {
          _tag: "PaymentFailed",
          userId: subscription.userId,
          service,
          periodStart: record.periodStart,
          attempt: record.attempts + 1,
          amountCents: record.amountCents,
          reason: failure.reason,
          nextAttemptAt,
          suspendsAt: subscription.status === "active" ? record.periodStart : null,
          endsAt: ends,
          payUrl: settings.billingPageUrl
        })
      }
    }
  })

/** Records the attempt's failure; the customer is told only by the pass that recorded it (a second one is a no-op). */
const recordOnce = (
  record: RenewalRecord,
  at: Date,
  outcome: Pick<Parameters<Renewals["Service"]["recordFailure"]>[0], "status" | "reason" | "nextAttemptAt" | "payUrl">,
  notice: CustomerNotice
) =>
  Effect.gen(function*() {
    const recorded = yield* (yield* Renewals).recordFailure({
      subscriptionId: record.subscriptionId,
      periodStart: record.periodStart,
      attempts: record.attempts,
      now: at,
      ...outcome
    })
    if (recorded) yield* (yield* Notices).send(notice)
  })

/** A hosted page for the period's amount; it comes back to the panel's billing page. */
const pageFor = (subscription: Subscription, record: RenewalRecord, planName: string, idempotencyKey: string) =>
  Effect.gen(function*() {
    return yield* (yield* PaymentGateway).paymentLink({
      customer: yield* customerOfUser(subscription.userId),
      amountCents: record.amountCents,
      description: `${planName}, renewal`,
      subscriptionId: subscription.id,
      periodStart: record.periodStart.toISOString(),
      returnUrl: (yield* RenewalSettings).billingPageUrl,
      idempotencyKey
    })
  })

/**
 * One pass, run with the lifecycle sweep (before it, so a period paid at its end never lapses): for each subscription
 * the renewal looks after, the reminder a week before the charge, then each attempt that is due. One subscription's
 * trouble is logged and left to the next pass.
 */
export const sweepRenewals = Effect.gen(function*() {
  const settings = yield* RenewalSettings
  const at = yield* now
  const horizon = new Date(at.getTime() + Duration.toMillis(settings.reminderLead))
  const subscriptions = yield* (yield* Subscriptions).renewable(horizon)
  yield* Effect.forEach(subscriptions, (subscription) =>
    renewalPass(subscription, at).pipe(
      Effect.catchCause((cause) => Effect.logError(`renewing subscription ${subscription.id} failed`, cause))
    ), { concurrency: 4, discard: true })
})

const renewalPass = (subscription: Subscription, at: Date) =>
  Effect.gen(function*() {
    const renewals = yield* Renewals
    const settings = yield* RenewalSettings
    const { plan, record } = yield* periodOf(subscription)
    if (record.status === "paid") return
    const periodStart = record.periodStart
    if (periodStart.getTime() > at.getTime()) {
      if (subscription.status === "active" && record.remindedAt === null && (yield* renewals.markReminded(subscription.id, periodStart, at))) {
        yield* remind(subscription, record, plan.name)
      }
      return
    }
    const claimed = yield* renewals.claim(subscription.id, periodStart, at, new Date(at.getTime() + Duration.toMillis(settings.claimLease)))
    if (Option.isSome(claimed)) yield* attempt(subscription, claimed.value, plan)
  })

const remind = (subscription: Subscription, record: RenewalRecord, planName: string) =>
  Effect.gen(function*() {
    // The card is told when the provider answers; the reminder goes out either way.
    const card = yield* (yield* PaymentGateway).savedCard(yield* customerOfUser(subscription.userId)).pipe(
      Effect.catchTag("PaymentUnavailable", () => Effect.succeedNone)
    )
    yield* (yield* Notices).send({
      _tag: "RenewalReminder",
      userId: subscription.userId,
      service: noticeService(subscription, planName),
      chargeAt: record.periodStart,
      amountCents: record.amountCents,
      card: Option.isSome(card) ? { brand: card.value.brand, last4: card.value.last4 } : null
    })
  })

/** What paying now from the panel did: paid (the saved card went through), or where to pay (a hosted page). */
export type PayNow =
  | { readonly _tag: "Paid"; readonly subscription: Subscription }
  | { readonly _tag: "PayOnPage"; readonly url: string }

/**
 * Pays the subscription's next period now, from the panel (early, or lapsed before its service ends): the saved card
 * first, with the period's current key (a charge the automatic renewal makes at the same moment is the same charge).
 * A refusal is recorded (the next try gets a new key); with `page`, the customer then gets a hosted page to pay on,
 * else the refusal.
 */
export const payNow = (subscription: Subscription, options: { readonly page: boolean }) =>
  Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    const at = yield* now
    const current = Effect.map(subscriptions.get(subscription.id), (s): PayNow => ({ _tag: "Paid", subscription: Option.getOrThrow(s) }))
    // Already paid beyond the next period (a double click, two tabs): answered as it stands, charging nothing.
    if (subscription.currentPeriodEnd.getTime() > addMonth(at).getTime()) return yield* current
    const { plan, record } = yield* periodOf(subscription)
    if (record.status === "paid") return yield* current
    const charged = yield* Effect.result(chargeSavedCard(subscription, record, plan.name))
    if (charged._tag === "Success") {
      yield* settle(subscription, record, plan, { reference: charged.success.reference, amountCents: record.amountCents })
      return yield* current
    }
    const failure = charged.failure
    if (failure._tag === "PaymentUnavailable") return yield* failure
    yield* (yield* Renewals).recordFailure({
      subscriptionId: subscription.id,
      periodStart: record.periodStart,
      attempts: record.attempts,
      status: record.status,
      reason: failure._tag === "PaymentDeclined" ? failure.reason : "authentication required",
      nextAttemptAt: record.nextAttemptAt,
      payUrl: null,
      now: at
    })
    if (!options.page) return yield* failure
    // A page per request (a stored one may have expired); a period paid twice is refunded (settle).
    const key = `renew-page:${subscription.id}:${record.periodStart.toISOString()}:${at.getTime()}`
    const page = yield* pageFor(subscription, record, plan.name, key)
    return { _tag: "PayOnPage", url: page.url } as PayNow
  })

/**
 * A renewal paid on its hosted page (the verified notification): its id is recorded in the same transaction as the
 * period's extension, so a redelivery changes nothing.
 */
export const receiveRenewalPayment = Effect.fn("receiveRenewalPayment")(function*(
  notification: Extract<PaymentNotification, { readonly _tag: "RenewalPaidOnPage" }>
) {
  const at = yield* now
  const notifications = yield* PaymentNotifications
  const subscription = yield* (yield* Subscriptions).get(notification.subscriptionId)
  const periodStart = new Date(notification.periodStart)
  if (Option.isNone(subscription) || Number.isNaN(periodStart.getTime())) {
    const fresh = yield* (yield* UnitOfWork).transaction(notifications.record(notification, at))
    if (fresh) yield* Effect.logWarning(`a renewal payment names an unknown subscription or period (notification ${notification.id})`)
    return { duplicate: !fresh }
  }
  const plan = yield* planOf(subscription.value)
  const record = yield* (yield* Renewals).open({ subscriptionId: subscription.value.id, periodStart, amountCents: notification.amountCents, now: at })
  const outcome = yield* settle(
    subscription.value,
    record,
    plan,
    { reference: notification.payment, amountCents: notification.amountCents },
    notifications.record(notification, at)
  )
  return { duplicate: outcome === "duplicate" }
})

