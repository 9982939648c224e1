// The automatic renewal's rules an operator tunes; the app builds this from configuration.
import { Context, Duration } from "effect"
import type { ServiceKind } from "./Billing.ts"

export class RenewalSettings extends Context.Service<RenewalSettings, {
  /** When a declined renewal is tried again, counted from the period's start (D+1, D+3, D+5). */
  readonly retryAfter: ReadonlyArray<Duration.Duration>
  /** How long before a charge the customer is reminded of it (7 days). */
  readonly reminderLead: Duration.Duration
  /** How long one pass holds a period's attempt: a pass that dies lets another try after this. */
  readonly claimLease: Duration.Duration
  /** How long a lapsed service of this kind is kept before it ends (the products' own grace windows). */
  readonly gracePeriod: (kind: ServiceKind) => Duration.Duration
  /** The panel's billing page: where a customer whose card was declined pays, and where hosted pages come back to. */
  readonly billingPageUrl: string
}>()("zh/domain/billing/RenewalSettings") {
  static readonly defaults = {
    retryAfter: [Duration.days(1), Duration.days(3), Duration.days(5)],
    reminderLead: Duration.days(7),
    claimLease: Duration.minutes(2)
  } as const
}
