// In-memory Placement: each reservation and VMID claim is one atomic modify, which serialises them like the lock.
import { Effect, Layer, Option, Ref } from "effect"
import type { Reservation } from "../../domain/vps/Vps.ts"
import { Placement } from "../../ports/Placement.ts"

interface Allocation {
  readonly cluster: string
  readonly vmid: number
  /** null once the VMID was found in use upstream by something else: then it is never handed out again. */
  readonly holder: string | null
}

interface State {
  /** In the order they were made, as the Postgres adapter lists them. */
  readonly reservations: ReadonlyArray<Reservation>
  readonly allocations: ReadonlyArray<Allocation>
}

export const make = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ reservations: [], allocations: [] })
  const update = (f: (s: State) => State) => Ref.update(state, f)
  return Placement.of({
    reserve: (cluster, holder, choose) =>
      // `choose` is pure and synchronous, so running it inside the modify keeps the whole decision atomic.
      Ref.modify(state, (s): readonly [Option.Option<Reservation>, State] => {
        const existing = s.reservations.find((r) => r.holder === holder)
        if (existing !== undefined) return [Option.some(existing), s]
        const chosen = choose(s.reservations.filter((r) => r.cluster === cluster))
        if (Option.isNone(chosen)) return [Option.none(), s]
        const reservation: Reservation = { ...chosen.value, holder, cluster, vmid: null }
        return [Option.some(reservation), { ...s, reservations: [...s.reservations, reservation] }]
      }),
    releaseReservation: (holder) => update((s) => ({ ...s, reservations: s.reservations.filter((r) => r.holder !== holder) })),
    allocateVmid: (cluster, holder, { from, to }) =>
      Ref.modify(state, (s): readonly [Option.Option<number> | string, State] => {
        const held = s.allocations.find((a) => a.holder === holder)
        if (held !== undefined) {
          return held.cluster === cluster
            ? [Option.some(held.vmid), s]
            : [`${holder} already holds VMID ${held.vmid} on cluster ${held.cluster}`, s]
        }
        const taken = new Set(s.allocations.filter((a) => a.cluster === cluster).map((a) => a.vmid))
        for (let vmid = from; vmid < to; vmid++) {
          if (!taken.has(vmid)) return [Option.some(vmid), { ...s, allocations: [...s.allocations, { cluster, vmid, holder }] }]
        }
        return [Option.none(), s]
      }).pipe(Effect.flatMap((r) => typeof r === "string" ? Effect.die(r) : Effect.succeed(r))),
    markVmidForeign: (cluster, vmid) =>
      update((s) => ({
        ...s,
        allocations: [
          ...s.allocations.filter((a) => a.cluster !== cluster || a.vmid !== vmid),
          { cluster, vmid, holder: null }
        ]
      })),
    releaseVmid: (holder) => update((s) => ({ ...s, allocations: s.allocations.filter((a) => a.holder !== holder) })),
    attachVmid: (holder, vmid) =>
      update((s) => ({ ...s, reservations: s.reservations.map((r) => r.holder === holder ? { ...r, vmid } : r) }))
  })
})

export const layer = Layer.effect(Placement, make)
