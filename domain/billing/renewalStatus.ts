// Where each of a customer's subscriptions stands with its renewal, for the billing page: charged on a date, declined
// and tried again, waiting for the customer's approval, lapsed, cancelled or ended (the panel puts it in words).
import { Clock, Effect } from "effect"
import { Renewals } from "../../ports/Renewals.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { endsAt, planOf, renewalPrice } from "./autoRenewal.ts"
import type { Subscription } from "./Billing.ts"

/** Where a subscription's renewal stands, for the billing page (the panel puts it in words). */
export type RenewalState =
  /** Charged automatically on `nextChargeAt`. */
  | "renews"
  /** The last charge was declined: tried again on `nextAttemptAt` (or not, when none is left). */
  | "payment_failed"
  /** The bank wants the customer to approve the payment: `payUrl`, or "pay" from the panel. */
  | "awaiting_authentication"
  /** The period lapsed unpaid: the service is suspended until `endsAt`; paying brings it back. */
  | "lapsed"
  /** Cancelled: runs until `endsAt`, not charged again. */
  | "cancelled"
  /** Gone for good (or never delivered). */
  | "ended"

export interface RenewalStatus {
  readonly subscription: Subscription
  readonly planName: string
  readonly state: RenewalState
  readonly amountCents: number
  readonly nextChargeAt: Date | null
  readonly nextAttemptAt: Date | null
  readonly attempts: number
  readonly lastFailure: string | null
  readonly payUrl: string | null
  /** When the service stops for good if nothing is paid (cancelled: its period's end). */
  readonly endsAt: Date | null
}

/** Each of the user's subscriptions and where its renewal stands. */
export const renewalStatuses = Effect.fn("renewalStatuses")(function*(userId: string) {
  const subscriptions = yield* (yield* Subscriptions).forUser(userId)
  const records = yield* (yield* Renewals).latest(subscriptions.map((s) => s.id))
  return yield* Effect.forEach(subscriptions, (subscription) =>
    Effect.gen(function*() {
      const plan = yield* planOf(subscription)
      const found = records.find((r) => r.subscriptionId === subscription.id && r.periodStart.getTime() === subscription.currentPeriodEnd.getTime())
      const record = found ?? null
      const ends = yield* endsAt(subscription, subscription.currentPeriodEnd)
      const base = {
        subscription,
        planName: plan.name,
        // The period's amount once its record is open; before, what it would cost now (VAT included).
        amountCents: record?.amountCents ?? (yield* renewalPrice(subscription, plan, new Date(yield* Clock.currentTimeMillis), false)),
        nextChargeAt: null,
        nextAttemptAt: null,
        attempts: record?.attempts ?? 0,
        lastFailure: record?.lastFailure ?? null,
        payUrl: null,
        endsAt: null
      } satisfies Omit<RenewalStatus, "state">
      if (subscription.status === "terminated" || subscription.status === "failed") return { ...base, state: "ended" } satisfies RenewalStatus
      if (subscription.cancelAtPeriodEnd) return { ...base, state: "cancelled", endsAt: subscription.currentPeriodEnd } satisfies RenewalStatus
      switch (record?.status) {
        case "awaiting_authentication":
          return { ...base, state: "awaiting_authentication", payUrl: record.payUrl, endsAt: ends } satisfies RenewalStatus
        case "retrying":
        case "failed":
          return { ...base, state: "payment_failed", nextAttemptAt: record.nextAttemptAt, endsAt: ends } satisfies RenewalStatus
        default:
          return subscription.status === "suspended"
            ? { ...base, state: "lapsed", endsAt: ends } satisfies RenewalStatus
            : { ...base, state: "renews", nextChargeAt: subscription.currentPeriodEnd } satisfies RenewalStatus
      }
    }), { concurrency: 4 })
})
