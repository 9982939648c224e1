// In-memory Ledger: like the table's UNIQUE (kind, reference), a replayed charge or refund is recorded once.
import { Effect, Layer, Ref } from "effect"
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
      Ref.modify(entries, (all): readonly [boolean, ReadonlyArray<LedgerEntry>] => {
        if (all.some((e) => e.kind === entry.kind && e.reference === entry.reference)) return [true, all]
        if (all.some((e) => e.id === entry.id)) return [false, all]
        return [true, [...all, { ...entry }]]
      }).pipe(Effect.flatMap((ok) => ok ? Effect.void : Effect.die(`ledger entry ${entry.id} already exists`))),
    forOrder: (orderId) => select((e) => e.orderId === orderId),
    forSubscription: (subscriptionId) => select((e) => e.subscriptionId === subscriptionId),
    forUser: (userId, limit) => Effect.map(select((e) => e.userId === userId), (all) => all.reverse().slice(0, limit))
  })
})

export const layer = Layer.effect(Ledger, make)
