// In-memory Ledger: like the table's UNIQUE (kind, reference), a replayed charge or refund is recorded once.
import { Effect, Layer, Option, Ref } from "effect"
import type { LedgerEntry } from "../../domain/billing/Billing.ts"
import { Ledger } from "../../ports/Ledger.ts"

/** The Postgres adapter's order: created_at, then id. */
const byCreation = (a: LedgerEntry, b: LedgerEntry) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const make = Effect.gen(function*() {
  const entries = yield* Ref.make<ReadonlyArray<LedgerEntry>>([])
  const select = (keep: (e: LedgerEntry) => boolean) => Effect.map(Ref.get(entries), (all) => all.filter(keep).sort(byCreation))
  return Ledger.of({
    record: (entry) =>
      Ref.modify(entries, (all): readonly ["new" | "replay" | "clash", ReadonlyArray<LedgerEntry>] => {
        if (all.some((e) => e.kind === entry.kind && e.reference === entry.reference)) return ["replay", all]
        if (all.some((e) => e.id === entry.id)) return ["clash", all]
        return ["new", [...all, { ...entry }]]
      }).pipe(Effect.flatMap((outcome) =>
        outcome === "clash" ? Effect.die(`ledger entry ${entry.id} already exists`) : Effect.succeed(outcome === "new")
      )),
    entry: (id) => Effect.map(Ref.get(entries), (all) => Option.fromNullishOr(all.find((e) => e.id === id))),
    forOrder: (orderId) => select((e) => e.orderId === orderId),
    paidAt: (orderIds) =>
      Effect.map(select((e) => e.kind === "charge" && e.subscriptionId !== null && e.orderId !== null && orderIds.includes(e.orderId)), (charges) => {
        const paid = new Map<string, Date>()
        // Oldest first: the first charge of each order is kept.
        for (const e of charges) if (!paid.has(e.orderId!)) paid.set(e.orderId!, e.createdAt)
        return paid
      }),
    forSubscription: (subscriptionId) => select((e) => e.subscriptionId === subscriptionId),
    forUser: (userId, after, limit) =>
      Effect.map(select((e) => e.userId === userId), (all) =>
        all.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
          .filter((e) =>
            after === null || e.createdAt.getTime() < after.at.getTime() || (e.createdAt.getTime() === after.at.getTime() && e.id < after.id))
          .slice(0, limit))
  })
})

export const layer = Layer.effect(Ledger, make)
