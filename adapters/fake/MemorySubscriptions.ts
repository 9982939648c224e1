// In-memory Subscriptions: each move is one atomic compare-and-set, so concurrent ones apply once.
import { Effect, Layer, Option, Ref } from "effect"
import { Subscription } from "../../domain/billing/Billing.ts"
import { moveWith } from "../../domain/billing/subscriptionMoves.ts"
import { subscriptionSources } from "../../domain/billing/transitions.ts"
import { type SubscriptionMove, Subscriptions } from "../../ports/Subscriptions.ts"

/** The Postgres adapter's orders: by creation for a user's list, by period end for the sweeper. */
const compareIds = (a: Subscription, b: Subscription) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const byCreation = (a: Subscription, b: Subscription) => a.createdAt.getTime() - b.createdAt.getTime() || compareIds(a, b)
const byPeriodEnd = (a: Subscription, b: Subscription) =>
  a.currentPeriodEnd.getTime() - b.currentPeriodEnd.getTime() || compareIds(a, b)

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Subscription>())
  const settled = yield* Ref.make(new Set<string>())
  /** Replaces the subscription when `f` returns one; answers whether it did. */
  const change = (id: string, f: (s: Subscription) => Subscription | undefined) =>
    Ref.modify(rows, (m): readonly [boolean, Map<string, Subscription>] => {
      const current = m.get(id)
      const next = current === undefined ? undefined : f(current)
      return next === undefined ? [false, m] : [true, new Map(m).set(id, next)]
    })
  /** The compare-and-set: the move applies only from its status (and period end, when given). */
  const transition = (id: string, move: SubscriptionMove) =>
    change(id, (s) =>
      s.status === move.from && (move.periodEnd === undefined || s.currentPeriodEnd.getTime() === move.periodEnd.getTime())
        ? new Subscription({ ...s, status: move.to, currentPeriodEnd: move.nextPeriodEnd ?? s.currentPeriodEnd })
        : undefined)
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
          withdrawnAt: null,
          createdAt: s.now
        })
        return [created, new Map(m).set(s.id, created)]
      }).pipe(Effect.flatMap((created) =>
        created === undefined ? Effect.die(`subscription ${s.id} or one for order ${s.orderId} exists`) : Effect.succeed(created)
      )),
    get: (id) => Effect.map(Ref.get(rows), (m) => Option.fromNullishOr(m.get(id))),
    forUser: (userId) => select((s) => s.userId === userId, byCreation),
    pageForUser: (userId, after, limit) =>
      Effect.map(
        select((s) =>
          s.userId === userId && (after === null || s.createdAt.getTime() > after.at.getTime() ||
            (s.createdAt.getTime() === after.at.getTime() && s.id > after.id)), byCreation),
        (page) => page.slice(0, limit)
      ),
    attachService: (id, serviceId) => Effect.asVoid(change(id, (s) => new Subscription({ ...s, serviceId }))),
    transition,
    extend: (id, expected, next) => moveWith({ transition })(id, "renewed", { periodEnd: expected, next }),
    setCancelAtPeriodEnd: (id, cancel) =>
      Effect.asVoid(change(id, (s) => new Subscription({ ...s, cancelAtPeriodEnd: cancel }))),
    due: (now) => select((s) => s.status === "active" && s.currentPeriodEnd.getTime() <= now.getTime(), byPeriodEnd),
    renewable: (until) =>
      select((s) =>
        subscriptionSources("renewed").some(([from]) => from === s.status) && !s.cancelAtPeriodEnd &&
        s.currentPeriodEnd.getTime() <= until.getTime(), byPeriodEnd),
    suspended: select((s) => s.status === "suspended", byPeriodEnd),
    withdraw: (id, at) =>
      change(id, (s) => {
        const move = subscriptionSources("withdrawn").find(([from]) => from === s.status)
        return move === undefined || s.withdrawnAt !== null
          ? undefined
          : new Subscription({ ...s, status: move[1], withdrawnAt: at })
      }),
    withdrawalSettled: (id) => Ref.update(settled, (ids) => new Set(ids).add(id)),
    unsettledWithdrawals: Effect.flatMap(Ref.get(settled), (ids) =>
      select((s) => s.withdrawnAt !== null && !ids.has(s.id), (a, b) =>
        (a.withdrawnAt?.getTime() ?? 0) - (b.withdrawnAt?.getTime() ?? 0) || compareIds(a, b)))
  })
})

export const layer = Layer.effect(Subscriptions, make)
