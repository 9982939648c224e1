// Thin handlers for orders, subscriptions and VPSes: one use case each, errors mapped in one table.
import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Order, Subscription } from "../../domain/billing/Billing.ts"
import { viewOrder } from "../../domain/billing/Ordering.ts"
import { orderAsCustomer, withdrawableUntil, withdrawFromContract } from "../../domain/billing/withdrawal.ts"
import type { ServiceSummary } from "../../domain/billing/HostedService.ts"
import { cancelSubscription, payRenewal, renewSubscription } from "../../domain/billing/Renewal.ts"
import { renewalStatuses, type RenewalStatus } from "../../domain/billing/renewalStatus.ts"
import { listSubscriptionsWithServices } from "../../domain/billing/subscriptionList.ts"
import type { Vps } from "../../domain/vps/Vps.ts"
import {
  createSnapshot,
  deleteSnapshot,
  listSnapshots,
  listVps,
  ownedVps,
  powerVps,
  resetRootPassword,
  shutdownVps
} from "../../domain/vps/VpsActions.ts"
import type { Snapshot } from "../../ports/Virtualization.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { Api } from "./Api.ts"
import { makeOwnAction } from "./audited.ts"
import { CustomerBudgets } from "./customerBudget.ts"
import { type DomainError, mapDomainErrors } from "./errorMapping.ts"
import { SHUTDOWN_TIMEOUT } from "./ServicesApi.ts"

export const orderView = (order: Order, rootPassword?: string) => ({
  id: order.id,
  planId: order.planId,
  kind: order.kind,
  status: order.status,
  progress: { step: order.step, total: order.totalSteps, name: order.stepName },
  ...(order.status !== "awaiting_payment" || order.checkoutUrl === null ? {} : { checkoutUrl: order.checkoutUrl }),
  ...(order.status !== "awaiting_payment" || order.expiresAt === null ? {} : { expiresAt: order.expiresAt.toISOString() }),
  ...(order.failureReason === null ? {} : { failureReason: order.failureReason }),
  ...(order.subscriptionId === null ? {} : { subscriptionId: order.subscriptionId }),
  ...(order.serviceId === null ? {} : { serviceId: order.serviceId }),
  ...(rootPassword === undefined ? {} : { rootPassword }),
  ...(order.retryOf === null ? {} : { retryOf: order.retryOf }),
  createdAt: order.createdAt.toISOString()
})

export const subscriptionView = (s: Subscription) => listedView(s, Option.none())

/**
 * A subscription as the customer's list shows it: with what its product says of its service, and until when its
 * consumer may withdraw from it.
 */
export const listedView = (s: Subscription, service: Option.Option<ServiceSummary>, withdrawable: Date | null = null) => ({
  id: s.id,
  planId: s.planId,
  kind: s.kind,
  status: s.status,
  currentPeriodEnd: s.currentPeriodEnd.toISOString(),
  cancelAtPeriodEnd: s.cancelAtPeriodEnd,
  ...(s.serviceId === null ? {} : { serviceId: s.serviceId }),
  ...(Option.isNone(service) ? {} : { service: service.value }),
  ...(s.withdrawnAt === null ? {} : { withdrawnAt: s.withdrawnAt.toISOString() }),
  ...(withdrawable === null ? {} : { withdrawableUntil: withdrawable.toISOString() }),
  createdAt: s.createdAt.toISOString()
})

const iso = (date: Date | null) => date === null ? null : date.toISOString()

export const renewalView = (r: RenewalStatus) => ({
  subscriptionId: r.subscription.id,
  planName: r.planName,
  kind: r.subscription.kind,
  state: r.state,
  amountCents: r.amountCents,
  nextChargeAt: iso(r.nextChargeAt),
  nextAttemptAt: iso(r.nextAttemptAt),
  attempts: r.attempts,
  lastFailure: r.lastFailure,
  payUrl: r.payUrl,
  endsAt: iso(r.endsAt)
})

export const vpsView = (v: Vps) => ({
  id: v.id,
  subscriptionId: v.subscriptionId,
  planId: v.planId,
  hostname: v.hostname,
  templateId: v.templateId,
  // A destroyed VPS's address went back to the pool and may be someone else's now.
  address: v.status === "destroyed" ? "" : v.address,
  status: v.status,
  ...(v.graceUntil === null ? {} : { graceUntil: v.graceUntil.toISOString() }),
  createdAt: v.createdAt.toISOString()
})

const snapshotView = (s: Snapshot) => ({
  name: s.name,
  description: s.description,
  ...(s.createdAt === null ? {} : { createdAt: s.createdAt.toISOString() })
})

const userId = Effect.map(CurrentSession, (s) => s.user.id)

/** Captures the services the use cases need when the handler layer is built (they are not per-request). */
const withServices = <S>() =>
  Effect.map(Effect.context<S>(), (services) => <A, E>(effect: Effect.Effect<A, E, S>) => Effect.provideContext(effect, services))

export const OrdersHandlers = HttpApiBuilder.group(Api, "orders", Effect.fn(function*(handlers) {
  const run = yield* withServices<Effect.Services<ReturnType<typeof orderAsCustomer>> | Effect.Services<ReturnType<typeof viewOrder>>>()
  return handlers
    .handle("create", ({ payload }) =>
      Effect.flatMap(CurrentSession, (session) =>
        run(orderAsCustomer(session.user, payload.planId, payload.options, payload.expressStartConsent === true))).pipe(
        Effect.map((order) => ({ order: orderView(order) })),
        mapDomainErrors
      ))
    .handle("get", ({ params }) =>
      Effect.flatMap(userId, (user) => run(viewOrder(user, params.id))).pipe(
        Effect.map((view) => orderView(view.order, view.rootPassword)),
        mapDomainErrors
      ))
}))

export const SubscriptionsHandlers = HttpApiBuilder.group(Api, "subscriptions", Effect.fn(function*(handlers) {
  const run = yield* withServices<
    | Effect.Services<ReturnType<typeof renewSubscription>>
    | Effect.Services<ReturnType<typeof cancelSubscription>>
    | Effect.Services<ReturnType<typeof listSubscriptionsWithServices>>
    | Effect.Services<ReturnType<typeof payRenewal>>
    | Effect.Services<ReturnType<typeof renewalStatuses>>
    | Effect.Services<ReturnType<typeof withdrawFromContract>>
  >()
  return handlers
    .handle("list", ({ query }) =>
      Effect.gen(function*() {
        const { user } = yield* CurrentSession
        const { next, subscriptions } = yield* run(listSubscriptionsWithServices(user.id, query.after, query.limit))
        const now = yield* Clock.currentTimeMillis
        return {
          ...(next === null ? {} : { next }),
          subscriptions: subscriptions.map((listed) =>
            listedView(listed.subscription, listed.service, withdrawableUntil(listed.subscription, user.accountType, now))
          )
        }
      }).pipe(mapDomainErrors))
    .handle("renewals", () =>
      Effect.flatMap(userId, (user) => run(renewalStatuses(user))).pipe(
        Effect.map((all) => ({ renewals: all.map(renewalView) })),
        mapDomainErrors
      ))
    .handle("pay", ({ params }) =>
      Effect.flatMap(userId, (user) => run(payRenewal(user, params.id))).pipe(
        Effect.map((answer) =>
          answer._tag === "Paid"
            ? { outcome: "paid" as const, subscription: subscriptionView(answer.subscription) }
            : { outcome: "pay_on_page" as const, url: answer.url }
        ),
        mapDomainErrors
      ))
    .handle("renew", ({ params }) =>
      Effect.flatMap(userId, (user) => run(renewSubscription(user, params.id))).pipe(
        Effect.map((s) => ({ subscription: subscriptionView(s) })),
        mapDomainErrors
      ))
    .handle("cancel", ({ params }) =>
      Effect.flatMap(userId, (user) => run(cancelSubscription(user, params.id))).pipe(
        Effect.map((s) => ({ subscription: subscriptionView(s) })),
        mapDomainErrors
      ))
    .handle("withdraw", ({ params }) =>
      Effect.flatMap(CurrentSession, (session) => run(withdrawFromContract(session.user, params.id))).pipe(
        Effect.map((done) => ({ subscription: subscriptionView(done.subscription), refundCents: done.refundCents })),
        mapDomainErrors
      ))
}))

type VpsServices =
  | Effect.Services<ReturnType<typeof powerVps>>
  | Effect.Services<ReturnType<typeof shutdownVps>>
  | Effect.Services<ReturnType<typeof createSnapshot>>
  | Effect.Services<ReturnType<typeof resetRootPassword>>

export const VpsHandlers = HttpApiBuilder.group(Api, "vps", Effect.fn(function*(handlers) {
  const run = yield* withServices<VpsServices>()
  const budgets = yield* CustomerBudgets
  const audit = yield* makeOwnAction
  /** A call that reaches Proxmox: the customer's share of the cluster's API is spent first (429 RATE_LIMITED past it). */
  const proxmox = <A, E extends DomainError>(action: (user: string) => Effect.Effect<A, E, VpsServices>) =>
    Effect.flatMap(userId, (user) => Effect.andThen(mapDomainErrors(budgets.spend(user, "proxmox")), mapDomainErrors(run(action(user)))))
  const power = (id: string, action: "start" | "stop" | "reset") =>
    proxmox((user) => powerVps(user, id, action)).pipe(
      Effect.tap(() => audit.current("vps.power", { type: "vps", id }, { action })),
      Effect.map((vps) => ({ vps: vpsView(vps) }))
    )
  return handlers
    .handle("list", () =>
      Effect.flatMap(userId, (user) => run(listVps(user))).pipe(Effect.map((all) => ({ vps: all.map(vpsView) })), mapDomainErrors))
    .handle("get", ({ params }) =>
      Effect.flatMap(userId, (user) => run(ownedVps(user, params.id))).pipe(
        Effect.map((vps) => ({ vps: vpsView(vps) })),
        mapDomainErrors
      ))
    .handle("start", ({ params }) => power(params.id, "start"))
    .handle("shutdown", ({ params, payload }) =>
      proxmox((user) => shutdownVps(user, params.id, payload?.timeoutSeconds ?? SHUTDOWN_TIMEOUT.default)).pipe(
        Effect.tap(() => audit.current("vps.power", { type: "vps", id: params.id }, { action: "shutdown" })),
        Effect.map((vps) => ({ vps: vpsView(vps) }))
      ))
    .handle("stop", ({ params }) => power(params.id, "stop"))
    .handle("reset", ({ params }) => power(params.id, "reset"))
    .handle("resetPassword", ({ params }) => proxmox((user) => resetRootPassword(user, params.id)))
    .handle("snapshots", ({ params }) =>
      proxmox((user) => listSnapshots(user, params.id)).pipe(Effect.map((all) => ({ snapshots: all.map(snapshotView) }))))
    .handle("createSnapshot", ({ params, payload }) =>
      proxmox((user) => createSnapshot(user, params.id, payload.name, payload.description ?? "")).pipe(
        Effect.map((all) => ({ snapshots: all.map(snapshotView) }))
      ))
    .handle("deleteSnapshot", ({ params }) => proxmox((user) => deleteSnapshot(user, params.id, params.name)))
}))
