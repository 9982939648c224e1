// In-memory Placement: each reservation is one atomic modify, which serialises them like the lock.
import { Effect, Layer, Option, Ref } from "effect"
import type { Reservation } from "../../domain/vps/Vps.ts"
import { Placement } from "../../ports/Placement.ts"

export const make = Effect.gen(function*() {
  /** In the order they were made, as the Postgres adapter lists them. */
  const state = yield* Ref.make<ReadonlyArray<Reservation>>([])
  return Placement.of({
    reserve: (cluster, holder, choose) =>
      // `choose` is pure and synchronous, so running it inside the modify keeps the whole decision atomic.
      Ref.modify(state, (all): readonly [Option.Option<Reservation>, ReadonlyArray<Reservation>] => {
        const existing = all.find((r) => r.holder === holder)
        if (existing !== undefined) return [Option.some(existing), all]
        const chosen = choose(all.filter((r) => r.cluster === cluster))
        if (Option.isNone(chosen)) return [Option.none(), all]
        const reservation: Reservation = { ...chosen.value, holder, cluster }
        return [Option.some(reservation), [...all, reservation]]
      }),
    releaseReservation: (holder) => Ref.update(state, (all) => all.filter((r) => r.holder !== holder)),
    pending: (cluster) => Effect.map(Ref.get(state), (all) => all.filter((r) => r.cluster === cluster))
  })
})

export const layer = Layer.effect(Placement, make)
