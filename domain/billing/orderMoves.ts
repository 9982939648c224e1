// An order's moves, persisted: the domain's table (transitions.ts) says which statuses an event may leave and where it
// leads, this file what each event records; the store applies each as a compare-and-set on the status left, so
// concurrent moves apply once and a finished order stays finished.
import { Effect } from "effect"
import { type OrderMove, type OrderRecorded, Orders } from "../../ports/Orders.ts"
import type { OrderStatus, SubscriptionId } from "./Billing.ts"
import { orderAfter, orderSources } from "./transitions.ts"

/** An event with what it records. */
export type OrderChange =
  | { readonly event: "checkoutOpened"; readonly session: string; readonly url: string }
  | { readonly event: "paid" }
  | {
    readonly event: "progressed"
    readonly step: number
    readonly stepName: string
    readonly subscriptionId?: SubscriptionId
  }
  | { readonly event: "provisioned"; readonly serviceId: string; readonly oneTimeSecret: string | null }
  | { readonly event: "failed"; readonly reason: string }
  | { readonly event: "expired" }

/** What `change` records on the order besides its status. */
const recorded = (change: OrderChange): OrderRecorded => {
  switch (change.event) {
    case "checkoutOpened":
      return { checkoutSession: change.session, checkoutUrl: change.url }
    case "paid":
      return { step: 0, stepName: "Queued" }
    case "progressed":
      return {
        step: change.step,
        stepName: change.stepName,
        ...(change.subscriptionId === undefined ? {} : { subscriptionId: change.subscriptionId })
      }
    case "provisioned":
      return { serviceId: change.serviceId, oneTimeSecret: change.oneTimeSecret }
    case "failed":
      return { failureReason: change.reason }
    case "expired":
      return { stepName: "Expired" }
  }
}

/** The move `change` makes of an order in status `from` at `now`; undefined when it is not legal there. */
export const orderMove = (from: OrderStatus, change: OrderChange, now: Date): OrderMove | undefined => {
  const to = orderAfter(from, change.event)
  return to === undefined ? undefined : { from, to, now, recorded: recorded(change) }
}

/**
 * Applies `change` to the order: tried from each status its event may leave, in the table's order, each as a
 * compare-and-set; true when one applied. False when none did: the order is in no status the event may leave (it is
 * finished, or not paid yet), or another move won the race.
 */
export const moveOrderWith = (store: Pick<Orders["Service"], "transition">) =>
  (id: string, change: OrderChange, now: Date): Effect.Effect<boolean, Effect.Error<ReturnType<typeof store.transition>>> =>
    Effect.gen(function*() {
      for (const [from] of orderSources(change.event)) {
        const move = orderMove(from, change, now)
        if (move !== undefined && (yield* store.transition(id, move))) return true
      }
      return false
    })

/** `moveOrderWith`, on the application's store. */
export const moveOrder = (id: string, change: OrderChange, now: Date) =>
  Effect.flatMap(Orders, (store) => moveOrderWith(store)(id, change, now))
