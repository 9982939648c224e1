// In-memory Subscriptions: each renewal or status move is one atomic modify, so concurrent ones apply once.
import { Effect, Layer, Option, Ref } from "effect"
import { Subscription, type SubscriptionStatus } from "../../domain/billing/Billing.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"

/** The Postgres adapter's orders: by creation for a user's list, by period end for the sweeper. */
const compareIds = (a: Subscription, b: Subscription) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const byCreation = (a: Subscription, b: Subscription) => a.createdAt.getTime() - b.createdAt.getTime() || compareIds(a, b)
const byPeriodEnd = (a: Subscription, b: Subscription) =>
  a.currentPeriodEnd.getTime() - b.currentPeriodEnd.getTime() || compareIds(a, b)

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Subscription>())
  /** Replaces the subscription when `f` returns one; answers whether it did. */
  const change = (id: string, f: (s: Subscription) => Subscription | undefined) =>
    Ref.modify(rows, (m): readonly [boolean, Map<string, Subscription>] => {
      const current = m.get(id)
      const next = current === undefined ? undefined : f(current)
      return next === undefined ? [false, m] : [true, new Map(m).set(id, next)]
    })
  const select = (keep: (s: Subscription) => boolean, order: (a: Subscription, b: Subscription) => number) =>
    Effect.map(Ref.get(rows), (m) => [...m.values()].filter(keep).sort(order))

  return Subscriptions.of({
    create: (s) =>
      Ref.modify(rows, (m): readonly [Subscription | undefined, Map<string, Subscription>] => {
        if (m.has(s.id) || [...m.values()].some((x) => x.orderId === s.orderId)) return [undefined, m]
        const created = new Subscription({
          id: s.id,
          userId: s.userId,
          planId: s.planId,
          kind: s.kind,
          orderId: s.orderId,
          status: "active",
          currentPeriodEnd: s.currentPeriodEnd,
          cancelAtPeriodEnd: false,
          serviceId: null,
          createdAt: s.now
        })
        return [created, new Map(m).set(s.id, created)]
      }).pipe(Effect.flatMap((created) =>
        created === undefined ? Effect.die(`subscription ${s.id} or one for order ${s.orderId} exists`) : Effect.succeed(created)
      )),
    get: (id) => Effect.map(Ref.get(rows), (m) => Option.fromNullishOr(m.get(id))),
    forUser: (userId) => select((s) => s.userId === userId, byCreation),
    attachService: (id, serviceId) => Effect.asVoid(change(id, (s) => new Subscription({ ...s, serviceId }))),
    extend: (id, expected, next) =>
      change(id, (s) =>
        s.currentPeriodEnd.getTime() === expected.getTime() && (s.status === "active" || s.status === "suspended")
          ? new Subscription({ ...s, currentPeriodEnd: next, status: "active" })
          : undefined),
    setStatus: (id, status: SubscriptionStatus, from) =>
      change(id, (s) => from.includes(s.status) ? new Subscription({ ...s, status }) : undefined),
    suspendLapsed: (id, periodEnd) =>
      change(id, (s) =>
        s.status === "active" && s.currentPeriodEnd.getTime() === periodEnd.getTime()
          ? new Subscription({ ...s, status: "suspended" })
          : undefined),
    setCancelAtPeriodEnd: (id, cancel) =>
      Effect.asVoid(change(id, (s) => new Subscription({ ...s, cancelAtPeriodEnd: cancel }))),
    due: (now) => select((s) => s.status === "active" && s.currentPeriodEnd.getTime() <= now.getTime(), byPeriodEnd),
    renewable: (until) =>
      select((s) =>
        (s.status === "active" || s.status === "suspended") && !s.cancelAtPeriodEnd &&
        s.currentPeriodEnd.getTime() <= until.getTime(), byPeriodEnd),
    suspended: select((s) => s.status === "suspended", byPeriodEnd)
  })
})

export const layer = Layer.effect(Subscriptions, make)
