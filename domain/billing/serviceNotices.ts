// What billing tells a customer about a service's life (ready, suspended, final warning, ended, cancelled): the
// service named as the customer bought it, and the notice handed to Notices, which sends each event once.
import { Duration, Effect, Option } from "effect"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import { type CustomerNotice, Notices, type NoticeService } from "../notices/CustomerNotice.ts"
import type { ServiceKind } from "./Billing.ts"
import type { PlanTerms } from "./HostedService.ts"

/** How long before a suspended service is destroyed or deleted its customer is warned a last time. */
export const FINAL_WARNING_BEFORE = Duration.days(2)

/** A subscription's service as a notice names it: its plan's name as sold (its id, if the plan is gone). */
export const noticeService = <R>(
  subscription: { readonly id: string; readonly kind: ServiceKind; readonly planId: string },
  planOf: (planId: string) => Effect.Effect<Option.Option<PlanTerms>, DatabaseUnavailable, R>
): Effect.Effect<NoticeService, DatabaseUnavailable, R> =>
  Effect.map(planOf(subscription.planId), (plan) => ({
    subscriptionId: subscription.id,
    kind: subscription.kind,
    planName: Option.match(plan, { onNone: () => subscription.planId, onSome: (p) => p.name })
  }))

/** Hands the notice to Notices (which never fails, and sends one e-mail per event). */
export const tell = (notice: CustomerNotice) => Effect.flatMap(Notices, (notices) => notices.send(notice))

/** Whether a suspended service ending at `endsAt` is within its final-warning window at `now` (and not ended yet). */
export const dueForFinalWarning = (endsAt: Date, now: number) =>
  now < endsAt.getTime() && now >= endsAt.getTime() - Duration.toMillis(FINAL_WARNING_BEFORE)
