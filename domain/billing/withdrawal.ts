// The consumer's withdrawal from a subscription (billing-fr.md §4; Code de la consommation L221-18 to L221-28): within
// 14 days of the contract's conclusion (its first payment), the consumer declares it with the "withdraw from this
// contract here" function; the declaration is acknowledged by e-mail with its content, date and time; the service
// ends at once; the price paid is refunded minus the part already provided, pro rata temporis (L221-25: the consumer
// asked the service to start at once, at order), through the payment gateway with a credit note. Professional
// accounts have no such right.
import { Clock, Effect, Option } from "effect"
import { SecureRandom } from "effect/crypto"
import { type AccountType, type User, UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import type { LedgerEntry, Subscription } from "./Billing.ts"
import {
  AlreadyWithdrawn,
  ExpressStartConsentRequired,
  ServiceNotReady,
  SubscriptionEnded,
  SubscriptionNotFound,
  WithdrawalNotAvailable,
  WithdrawalPeriodOver
} from "./BillingErrors.ts"
import { HostedServices } from "./HostedService.ts"
import { parisDay, parisMidnight } from "./invoicing/accountantExport.ts"
import { recordRefund } from "./invoicing/issueDocuments.ts"
import { placeOrder } from "./Ordering.ts"
import { noticeService, tell } from "./serviceNotices.ts"

/** The statutory withdrawal period, in days (L221-18). */
export const WITHDRAWAL_DAYS = 14

const DAY_MS = 86_400_000

/** Easter Sunday of `year` (Gregorian; the anonymous algorithm), as UTC midnight. */
const easter = (year: number) => {
  const a = year % 19
  const b = Math.floor(year / 100)
  const c = year % 100
  const d = Math.floor(b / 4)
  const e = b % 4
  const f = Math.floor((b + 8) / 25)
  const g = Math.floor((b - f + 1) / 3)
  const h = (19 * a + b - d - g + 15) % 30
  const i = Math.floor(c / 4)
  const k = c % 4
  const l = (32 + 2 * e + 2 * i - h - k) % 7
  const m = Math.floor((a + 11 * h + 22 * l) / 451)
  const month = Math.floor((h + l - 7 * m + 114) / 31)
  const day = ((h + l - 7 * m + 114) % 31) + 1
  return Date.UTC(year, month - 1, day)
}

/** France's public holidays (jours fériés of the Code du travail L3133-1, mainland): fixed ones, and Easter's. */
const isPublicHoliday = (day: number) => {
  const date = new Date(day)
  const year = date.getUTCFullYear()
  const monthDay = `${date.getUTCMonth() + 1}-${date.getUTCDate()}`
  if (["1-1", "5-1", "5-8", "7-14", "8-15", "11-1", "11-11", "12-25"].includes(monthDay)) return true
  const e = easter(year)
  return [1, 39, 50].some((offset) => e + offset * DAY_MS === day)
}

/**
 * When the withdrawal period of a contract concluded at `concludedAt` ends: the day of conclusion does not count, the
 * period runs 14 whole days in Paris and, ending on a Saturday, Sunday or public holiday, runs on to the next working
 * day's end (L221-19, Code de procédure civile art. 641 and 642). Answers the first instant after it.
 */
export const withdrawalPeriodEnd = (concludedAt: Date): Date => {
  // Calendar days as the UTC midnight of their date: plain day arithmetic, no time zone in between.
  let lastDay = Date.parse(`${parisDay(concludedAt)}T00:00:00.000Z`) + WITHDRAWAL_DAYS * DAY_MS
  const isWorkingDay = (day: number) => {
    const weekday = new Date(day).getUTCDay()
    return weekday !== 0 && weekday !== 6 && !isPublicHoliday(day)
  }
  while (!isWorkingDay(lastDay)) lastDay += DAY_MS
  return parisMidnight(new Date(lastDay + DAY_MS).toISOString().slice(0, 10))
}

/**
 * What a withdrawal gives back of `paidCents` paid for the period from `periodStart` to `periodEnd`, withdrawn at
 * `withdrawnAt`: the price minus the part already provided, pro rata temporis to the second. The part provided is
 * rounded down to the cent, and the time used down to the second, so any rounding is in the customer's favour.
 */
export const withdrawalRefundCents = (paidCents: number, periodStart: Date, periodEnd: Date, withdrawnAt: Date): number => {
  const total = BigInt(Math.max(1, Math.floor((periodEnd.getTime() - periodStart.getTime()) / 1000)))
  const used = BigInt(Math.min(Number(total), Math.max(0, Math.floor((withdrawnAt.getTime() - periodStart.getTime()) / 1000))))
  const provided = (BigInt(paidCents) * used) / total
  return paidCents - Number(provided)
}

/**
 * How a withdrawal's refund is split over the subscription's charges. What the consumer owes is the price paid for the
 * part provided (`withdrawalRefundCents`); what was already given back before the withdrawal (an operator's refund) is
 * not given twice: the refund is what was paid, less those refunds, less what is owed (never below zero), taken from
 * the newest charges first, each up to what is left of it. Deterministic (the charges, the refunds recorded before the
 * withdrawal and its stored time decide it), so finishing an interrupted withdrawal refunds the same amounts under the
 * same keys.
 */
const refundPlan = (subscription: Subscription, withdrawnAt: Date, entries: ReadonlyArray<LedgerEntry>) => {
  const charges = entries.filter((e) => e.kind === "charge")
    .toSorted((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
  const refundedBefore = new Map<string, number>()
  for (const e of entries) {
    if (e.kind !== "refund" || e.createdAt.getTime() >= withdrawnAt.getTime()) continue
    const charge = e.reference.split(":")[0] ?? ""
    refundedBefore.set(charge, (refundedBefore.get(charge) ?? 0) + e.amountCents)
  }
  const paid = charges.reduce((sum, c) => sum + c.amountCents, 0)
  const given = [...refundedBefore.values()].reduce((sum, cents) => sum + cents, 0)
  const owed = paid - withdrawalRefundCents(paid, subscription.createdAt, subscription.currentPeriodEnd, withdrawnAt)
  const total = Math.max(0, paid - given - owed)
  let left = total
  const parts: Array<{ readonly charge: LedgerEntry; readonly amountCents: number }> = []
  for (const charge of charges) {
    const amountCents = Math.min(left, Math.max(0, charge.amountCents - (refundedBefore.get(charge.reference) ?? 0)))
    if (amountCents > 0) parts.push({ charge, amountCents })
    left -= amountCents
  }
  return { paid, total, parts }
}

/** The gateway's idempotency key of a withdrawal's refund of one charge. */
export const withdrawalRefundKey = (subscriptionId: string, chargeId: string) => `withdraw:${subscriptionId}:${chargeId}`

/**
 * The refund of a withdrawal, given back charge by charge through the gateway (one key per charge: a retry is the same
 * refund), each recorded with its credit note in one transaction (a replay records nothing twice), the customer told
 * of each; then the withdrawal is marked settled. Fails PaymentUnavailable when the gateway cannot be reached: the
 * lifecycle sweep finishes it later (`finishWithdrawals`).
 */
export const settleWithdrawal = (subscription: Subscription) =>
  Effect.gen(function*() {
    const withdrawnAt = subscription.withdrawnAt
    if (withdrawnAt === null) return
    const plan = refundPlan(subscription, withdrawnAt, yield* (yield* Ledger).forSubscription(subscription.id))
    const gateway = yield* PaymentGateway
    for (const { amountCents, charge } of plan.parts) {
      const refund = yield* gateway.refund({
        charge: charge.reference,
        amountCents,
        idempotencyKey: withdrawalRefundKey(subscription.id, charge.id)
      })
      const entry = {
        id: yield* (yield* SecureRandom.SecureRandom).uuidV4(),
        userId: subscription.userId,
        subscriptionId: subscription.id,
        orderId: charge.orderId,
        kind: "refund" as const,
        amountCents,
        reference: `${charge.reference}:${refund.reference}`,
        createdAt: new Date(yield* Clock.currentTimeMillis)
      }
      // The refund, its credit note and its notice together; the e-mail (the credit note attached) after the commit.
      yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
        const credit = yield* recordRefund(entry, charge.reference)
        yield* tell({
          _tag: "RefundIssued",
          userId: subscription.userId,
          refundId: refund.reference,
          amountCents,
          reason: "withdrawal",
          creditNoteId: Option.getOrNull(Option.map(credit, (c) => c.id))
        })
      }))
    }
    yield* (yield* Subscriptions).withdrawalSettled(subscription.id, new Date(yield* Clock.currentTimeMillis))
  })

/** The service of a withdrawn subscription ends now, through its product (idempotent: keyed by the withdrawal). */
const endService = (subscription: Subscription, withdrawnAt: Date) =>
  Effect.flatMap(Effect.flatMap(HostedServices, (products) => products.of(subscription.kind)), (product) =>
    product.terminate(subscription.id, withdrawnAt))

/** Who withdraws: the signed-in customer. */
export interface Withdrawer {
  readonly id: string
  readonly accountType: AccountType
  readonly firstName: string
  readonly lastName: string
}

/**
 * What the withdrawal function shows of a subscription: until when its customer may withdraw (none: not now). Not
 * while its service is still being built: ending it then would race its provisioning, so the function opens once the
 * service is ready (minutes after the payment).
 */
export const withdrawableUntil = (subscription: Subscription, accountType: AccountType, now: number): Date | null => {
  if (accountType !== "personal" || subscription.status !== "active" || subscription.withdrawnAt !== null) return null
  if (subscription.serviceId === null) return null
  const end = withdrawalPeriodEnd(subscription.createdAt)
  return now < end.getTime() ? end : null
}

/**
 * The withdrawal function's confirmed declaration. Owner only (anyone else: SubscriptionNotFound); a professional
 * account: WithdrawalNotAvailable; a second declaration: AlreadyWithdrawn; an ended subscription: SubscriptionEnded;
 * after the period: WithdrawalPeriodOver; a service still being built: ServiceNotReady. Of declarations at once
 * exactly one applies (a compare-and-set), acknowledged by e-mail and kept in the audit trail in its transaction (the
 * acknowledgement is recorded with the withdrawal or not at all, and e-mailed once it commits); then the service ends
 * and the refund is made with its credit note. A gateway that cannot be reached now delays the refund (the lifecycle
 * sweep finishes it), never the withdrawal.
 */
export const withdrawFromContract = Effect.fn("withdrawFromContract")(function*(user: Withdrawer, subscriptionId: string) {
  const subscriptions = yield* Subscriptions
  const found = yield* subscriptions.get(subscriptionId)
  if (Option.isNone(found) || found.value.userId !== user.id) return yield* new SubscriptionNotFound()
  const subscription = found.value
  if (user.accountType !== "personal") return yield* new WithdrawalNotAvailable()
  if (subscription.withdrawnAt !== null) return yield* new AlreadyWithdrawn()
  if (subscription.status !== "active") return yield* new SubscriptionEnded()
  const at = new Date(yield* Clock.currentTimeMillis)
  const periodEnd = withdrawalPeriodEnd(subscription.createdAt)
  if (at.getTime() >= periodEnd.getTime()) return yield* new WithdrawalPeriodOver({ endedAt: periodEnd })
  if (subscription.serviceId === null) return yield* new ServiceNotReady()
  const plan = refundPlan(subscription, at, yield* (yield* Ledger).forSubscription(subscription.id))
  const product = yield* (yield* HostedServices).of(subscription.kind)
  const service = yield* noticeService(subscription, product.plan)
  const declared = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    if (!(yield* subscriptions.withdraw(subscription.id, at))) return false
    yield* tell({
      _tag: "WithdrawalAcknowledged",
      userId: user.id,
      service,
      customerName: `${user.firstName} ${user.lastName}`.trim(),
      concludedAt: subscription.createdAt,
      declaredAt: at,
      paidCents: plan.paid,
      refundCents: plan.total
    })
    // The declaration's evidence, in the customer's trail.
    yield* recordAudit({
      actorId: UserId.make(user.id),
      actorRole: "customer",
      action: "subscription.withdrawn",
      subjectUserId: UserId.make(user.id),
      target: { type: "subscription", id: subscription.id },
      details: { declaredAt: at.toISOString(), concludedAt: subscription.createdAt.toISOString(), paidCents: plan.paid, refundCents: plan.total }
    })
    return true
  }))
  if (!declared) {
    const now = yield* subscriptions.get(subscription.id)
    return yield* (Option.isSome(now) && now.value.withdrawnAt !== null ? new AlreadyWithdrawn() : new SubscriptionEnded())
  }
  const withdrawn = Option.getOrThrow(yield* subscriptions.get(subscription.id))
  yield* endService(withdrawn, at)
  yield* settleWithdrawal(withdrawn).pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning(`the refund of the withdrawal from subscription ${subscription.id} is delayed; the sweep finishes it`, cause))
  )
  return { subscription: withdrawn, refundCents: plan.total }
})

/**
 * Withdrawals a stopped process left unfinished (declared and acknowledged, not refunded): their service ended and
 * their refund made, each on its own (one gateway's trouble is logged, and the next pass tries again).
 */
export const finishWithdrawals = Effect.gen(function*() {
  const unsettled = yield* (yield* Subscriptions).unsettledWithdrawals
  yield* Effect.forEach(unsettled, (subscription) =>
    Effect.gen(function*() {
      if (subscription.withdrawnAt === null) return
      yield* endService(subscription, subscription.withdrawnAt)
      yield* settleWithdrawal(subscription)
    }).pipe(Effect.catchCause((cause) => Effect.logError(`finishing the withdrawal from subscription ${subscription.id} failed`, cause))), { discard: true })
})

/**
 * An order placed by a signed-in customer: a consumer (a personal account) must expressly ask for the service to start
 * before the withdrawal period ends, since ours start at once (L221-25); without it the order is refused before
 * anything is created or charged (ExpressStartConsentRequired). A professional account has no withdrawal right: its
 * answer is not asked for, and not stored.
 */
export const orderAsCustomer = Effect.fn("orderAsCustomer")(function*(
  user: User,
  planId: string,
  rawOptions: unknown,
  expressStartConsent: boolean
) {
  const consumer = user.accountType === "personal"
  if (consumer && !expressStartConsent) return yield* new ExpressStartConsentRequired()
  return yield* placeOrder(user, planId, rawOptions, consumer)
})
