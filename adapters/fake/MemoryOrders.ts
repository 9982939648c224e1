// In-memory Orders with the same guarantees: each move a compare-and-set on the status it leaves, the one-time secret
// read once.
import { Effect, Layer, Option, Ref } from "effect"
import { Order, type OrderId, type PendingCleanup, PlanId } from "../../domain/billing/Billing.ts"
import { type NewOrder, Orders } from "../../ports/Orders.ts"

interface Row {
  readonly order: Order
  readonly oneTimeSecret: string | null
  readonly cleanup?: Omit<PendingCleanup, "orderId" | "kind">
}

/** The Postgres adapter's order: created_at, then id. */
const byCreation = (a: { readonly createdAt: Date; readonly id: string }, b: { readonly createdAt: Date; readonly id: string }) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const isUnfinished = (order: Order) => order.status === "awaiting_payment" || order.status === "provisioning"

/** A new order awaiting its payment. */
const fresh = (o: NewOrder, retryOf: OrderId | null) =>
  new Order({
    id: o.id,
    userId: o.userId,
    planId: PlanId.make(o.planId),
    kind: o.kind,
    options: structuredClone(o.options),
    status: "awaiting_payment",
    step: 0,
    totalSteps: o.totalSteps,
    stepName: "Payment",
    failureReason: null,
    subscriptionId: null,
    serviceId: null,
    checkoutSession: null,
    checkoutUrl: null,
    expiresAt: o.expiresAt,
    expressStartRequestedAt: o.expressStartRequestedAt ?? null,
    retryOf,
    retriedAs: null,
    createdAt: o.now,
    updatedAt: o.now
  })

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Row>())
  /** Applies `f` to the order's row, finished or not. */
  const change = (id: string, f: (row: Row) => Row) =>
    Ref.update(rows, (m) => {
      const row = m.get(id)
      return row === undefined ? m : new Map(m).set(id, f(row))
    })
  return Orders.of({
    create: (o) =>
      Ref.modify(rows, (m): readonly [Order | undefined, Map<string, Row>] => {
        if (m.has(o.id)) return [undefined, m]
        const order = fresh(o, null)
        return [order, new Map(m).set(o.id, { order, oneTimeSecret: null })]
      }).pipe(Effect.flatMap((order) =>
        order === undefined ? Effect.die(`order ${o.id} already exists`) : Effect.succeed(order)
      )),
    createRetry: (o) =>
      Ref.modify(rows, (m): readonly [{ readonly created: boolean; readonly order: Order } | undefined, Map<string, Row>] => {
        const failed = m.get(o.retryOf)
        if (m.has(o.id) || failed === undefined) return [undefined, m]
        const before = [...m.values()].find((row) => row.order.retryOf === o.retryOf)
        if (before !== undefined) return [{ created: false, order: before.order }, m]
        const order = fresh(o, o.retryOf)
        return [{ created: true, order }, new Map(m)
          .set(o.id, { order, oneTimeSecret: null })
          .set(o.retryOf, { ...failed, order: new Order({ ...failed.order, retriedAs: o.id }) })]
      }).pipe(Effect.flatMap((outcome) =>
        outcome === undefined ? Effect.die(`order ${o.id} already exists, or order ${o.retryOf} does not`) : Effect.succeed(outcome)
      )),
    ofCustomer: (userId, after, limit) =>
      Effect.map(Ref.get(rows), (m) =>
        [...m.values()].map((row) => row.order)
          .filter((o) => o.userId === userId && (after === null || byCreation(o, { createdAt: after.at, id: after.id }) < 0))
          .sort((a, b) => byCreation(b, a))
          .slice(0, limit)),
    get: (id) => Effect.map(Ref.get(rows), (m) => Option.map(Option.fromNullishOr(m.get(id)), (row) => row.order)),
    transition: (id, { from, to, now, recorded: { oneTimeSecret, ...fields } }) =>
      Ref.modify(rows, (m): readonly [boolean, Map<string, Row>] => {
        const row = m.get(id)
        if (row === undefined || row.order.status !== from) return [false, m]
        const order = new Order({ ...row.order, ...fields, status: to, updatedAt: now })
        return [true, new Map(m).set(id, { ...row, order, oneTimeSecret: oneTimeSecret === undefined ? row.oneTimeSecret : oneTimeSecret })]
      }),
    dueForExpiry: (now) =>
      Effect.map(Ref.get(rows), (m) =>
        [...m.values()].map((row) => row.order)
          .filter((o) => o.status === "awaiting_payment" && o.expiresAt !== null && o.expiresAt.getTime() <= now.getTime())
          .sort((a, b) => a.expiresAt!.getTime() - b.expiresAt!.getTime() || (a.id < b.id ? -1 : 1))),
    failedSince: (since) =>
      Effect.map(Ref.get(rows), (all) =>
        [...all.values()].filter((row) => row.order.status === "failed" && row.order.updatedAt.getTime() >= since.getTime()).length),
    takeOneTimeSecret: (id) =>
      Ref.modify(rows, (m): readonly [Option.Option<string>, Map<string, Row>] => {
        const row = m.get(id)
        if (row === undefined || row.oneTimeSecret === null) return [Option.none(), m]
        return [Option.some(row.oneTimeSecret), new Map(m).set(id, { ...row, oneTimeSecret: null })]
      }),
    failed: (limit) =>
      Effect.map(Ref.get(rows), (m) =>
        [...m.values()].map((row) => row.order).filter((o) => o.status === "failed")
          .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : -1))
          .slice(0, limit)),
    unfinished: Effect.map(Ref.get(rows), (m) =>
      [...m.values()].map((row) => row.order).filter(isUnfinished).sort(byCreation)),
    cleanupPending: (id, now) =>
      change(id, (row) => row.cleanup === undefined ? { ...row, cleanup: { since: now, attempts: 0, lastError: null } } : row),
    cleanupFailed: (id, error) =>
      change(id, (row) =>
        row.cleanup === undefined ? row : { ...row, cleanup: { ...row.cleanup, attempts: row.cleanup.attempts + 1, lastError: error } }),
    cleanupDone: (id) =>
      change(id, ({ cleanup: _, ...row }) => row),
    pendingCleanups: Effect.map(Ref.get(rows), (m) =>
      [...m.values()].flatMap((row): ReadonlyArray<PendingCleanup> =>
        row.cleanup === undefined ? [] : [{ orderId: row.order.id, kind: row.order.kind, ...row.cleanup }]
      ).sort((a, b) => a.since.getTime() - b.since.getTime() || (a.orderId < b.orderId ? -1 : 1)))
  })
})

export const layer = Layer.effect(Orders, make)
