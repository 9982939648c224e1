// What billing sells, in billing's words: a product (a VPS, a game server, …) implements `HostedService` and app/
// registers it by kind (registerProduct.ts). Billing asks it for a plan's terms, for the customer's options checked, to build the service
// (a durable workflow with named steps that refunds through billing when it fails), and to suspend, bring back and
// end it as the subscription's periods go; billing never imports a product, and a product never sees a payment.
import { Context, Duration, Effect, Layer, type Option } from "effect"
import type { PlanId, ServiceKind } from "./Billing.ts"
import type { InvalidOrderOption, PlanOffSale, PlanUnavailable, ProductUnavailable, ServiceUpstreamUnavailable, SoldOut } from "./BillingErrors.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"

/** Why an order is refused before anything is charged. */
export type OrderRefused = InvalidOrderOption | PlanOffSale | PlanUnavailable | ProductUnavailable | SoldOut

/** What the customer's lists show of a subscription's service, whatever the product: its name, address and state. */
export interface ServiceSummary {
  readonly name: string
  /** Where it is reached (`203.0.113.10`, `play.example:25565`); empty once it is gone. */
  readonly address: string
  /** The product's own word for its state (`running`, `suspended`, `deleted` …). */
  readonly state: string
}

/**
 * The upstream's live state of a service, as its product reads it now (an operator compares it with our records):
 * the upstream's word for its state, whether what is there is still ours, and the facts worth showing (configuration,
 * placement). An upstream that does not answer is `reachable: false`, never a failure.
 */
export type ServiceInspection =
  | {
    readonly reachable: true
    /** Which upstream answered ("proxmox", "pterodactyl", …). */
    readonly upstream: string
    readonly state: string
    /** `ours`: it carries our order's mark; `gone`: nothing is there; `foreign`: something else is. */
    readonly ownership: "ours" | "gone" | "foreign"
    readonly facts: ReadonlyArray<readonly [label: string, value: string]>
  }
  | { readonly reachable: false; readonly upstream: string; readonly detail: string }

/** How long an operator's page waits for an upstream's live state. */
export const INSPECTION_PATIENCE = Duration.seconds(5)

/** A product's reading of its upstream, or `reachable: false` when the upstream fails or is slower than the patience. */
export const inspectedWithin = <E extends { readonly _tag: string }, R>(
  upstream: string,
  live: Effect.Effect<ServiceInspection, E, R>
): Effect.Effect<ServiceInspection, never, R> =>
  live.pipe(
    Effect.timeout(INSPECTION_PATIENCE),
    Effect.catch((e) =>
      Effect.succeed<ServiceInspection>({
        reachable: false,
        upstream,
        detail: e._tag === "TimeoutError" ? `no answer within ${Duration.format(INSPECTION_PATIENCE)}` : e._tag
      }))
  )

/** What billing needs of a plan: what the customer is charged for, every month. */
export interface PlanTerms {
  readonly id: PlanId
  readonly name: string
  readonly priceCents: number
}

/** A plan for sale and the customer's options, checked against it and as they are to be stored with the order. */
export interface PreparedOrder {
  readonly plan: PlanTerms
  readonly options: Readonly<Record<string, unknown>>
}

export interface HostedService {
  readonly kind: ServiceKind
  /** The provisioning's progress steps, as the customer sees them; the order counts them. */
  readonly steps: ReadonlyArray<string>
  /**
   * None when the plan is not one of this product's or is not for sale now; else the customer's options, decoded and
   * checked against it (InvalidOrderOption names the field), then the product's room for it (SoldOut when it knows it
   * has none now), before anything is charged.
   */
  prepareOrder(planId: string, options: unknown): Effect.Effect<Option.Option<PreparedOrder>, OrderRefused | DatabaseUnavailable>
  /** What the customer's lists show of the subscription's service (none: not built yet). */
  summary(subscriptionId: string): Effect.Effect<Option.Option<ServiceSummary>, DatabaseUnavailable>
  /** The upstream's live state of the subscription's service (none: not built, or gone from our records). */
  inspect(subscriptionId: string): Effect.Effect<Option.Option<ServiceInspection>, DatabaseUnavailable>
  /** One of this product's plans, retired ones included (a renewal bills it). */
  plan(planId: string): Effect.Effect<Option.Option<PlanTerms>, DatabaseUnavailable>
  /**
   * Starts (or joins: idempotent by order id) the durable provisioning of a paid order. It reports its steps on the
   * order and completes it, or refunds and fails it (billing's `failAndRefund`) and undoes what it built.
   */
  provision(orderId: string): Effect.Effect<void>
  /** Starts the durable lapse of the period ending `periodEnd`: the service stops, kept for the grace window. */
  suspend(subscriptionId: string, periodEnd: Date): Effect.Effect<void>
  /** When the grace window of a suspended service ends (none: nothing of it left to end). */
  graceUntil(subscriptionId: string): Effect.Effect<Option.Option<Date>, DatabaseUnavailable>
  /**
   * Starts the durable end of a service whose grace window ended, or whose consumer withdrew (`graceUntil`: the
   * withdrawal's time): it is gone for good, the subscription terminated.
   */
  terminate(subscriptionId: string, graceUntil: Date): Effect.Effect<void>
  /**
   * A renewal was paid for the period that ended `periodEnd`: a suspended service comes back, at once when its upstream
   * answers, else durably (a workflow keeps trying, once per renewed period).
   */
  resume(subscriptionId: string, periodEnd: Date): Effect.Effect<void, DatabaseUnavailable>
  /**
   * An operator's hold (ServiceHold.ts, recorded first): the service stops now as at the lapse of its current period,
   * whatever its periods say; a renewal never brings it back while the hold is in force. Idempotent.
   */
  hold(subscriptionId: string): Effect.Effect<void, ServiceUpstreamUnavailable | DatabaseUnavailable>
  /** Before a hold is lifted: the service of an active subscription comes back now; a lapsed one stays suspended. */
  unhold(subscriptionId: string): Effect.Effect<void, ServiceUpstreamUnavailable | DatabaseUnavailable>
  /**
   * An admin ends the service now, for good: removed upstream (false, nothing changed, when what is there is not
   * ours), then the subscription terminated (`endedByOperator`) and what the service held released. Idempotent.
   */
  end(subscriptionId: string): Effect.Effect<boolean, ServiceUpstreamUnavailable | DatabaseUnavailable>
}

/**
 * The products on sale, by kind. Each product's layer registers itself once, when the application is built
 * (`HostedServices.register`); billing then asks by the kind stored on an order or subscription.
 */
export class HostedServices extends Context.Service<HostedServices, {
  readonly register: (service: HostedService) => Effect.Effect<void>
  /** The product of that kind; a kind nobody registered is a wiring bug (a defect). */
  readonly of: (kind: ServiceKind) => Effect.Effect<HostedService>
  readonly all: Effect.Effect<ReadonlyArray<HostedService>>
}>()("zh/domain/billing/HostedServices") {
  static readonly layer = Layer.sync(HostedServices, () => {
    const byKind = new Map<ServiceKind, HostedService>()
    return HostedServices.of({
      register: (service) =>
        Effect.suspend(() =>
          byKind.has(service.kind)
            ? Effect.die(new Error(`two products registered for kind "${service.kind}"`))
            : Effect.sync(() => void byKind.set(service.kind, service))),
      of: (kind) =>
        Effect.suspend(() => {
          const service = byKind.get(kind)
          return service === undefined ? Effect.die(new Error(`no product is registered for kind "${kind}"`)) : Effect.succeed(service)
        }),
      all: Effect.sync(() => [...byKind.values()])
    })
  })
}
