// In-memory ProxmoxVmids: each claim is one atomic modify, which serialises them like the primary key.
import { Effect, Layer, Option, Ref } from "effect"
import { ProxmoxVmids } from "../../ports/ProxmoxVmids.ts"

interface Allocation {
  readonly cluster: string
  readonly vmid: number
  /** null once the VMID was found in use upstream by something else: then it is never handed out again. */
  readonly holder: string | null
}

export const make = Effect.gen(function*() {
  const state = yield* Ref.make<ReadonlyArray<Allocation>>([])
  return ProxmoxVmids.of({
    allocate: (cluster, order, { from, to }) =>
      Ref.modify(state, (all): readonly [Option.Option<number> | string, ReadonlyArray<Allocation>] => {
        const held = all.find((a) => a.holder === order)
        if (held !== undefined) {
          return held.cluster === cluster
            ? [Option.some(held.vmid), all]
            : [`${order} already holds VMID ${held.vmid} on cluster ${held.cluster}`, all]
        }
        const taken = new Set(all.filter((a) => a.cluster === cluster).map((a) => a.vmid))
        for (let vmid = from; vmid < to; vmid++) {
          if (!taken.has(vmid)) return [Option.some(vmid), [...all, { cluster, vmid, holder: order }]]
        }
        return [Option.none(), all]
      }).pipe(Effect.flatMap((r) => typeof r === "string" ? Effect.die(r) : Effect.succeed(r))),
    setAside: (cluster, vmid) =>
      Ref.update(state, (all) => [...all.filter((a) => a.cluster !== cluster || a.vmid !== vmid), { cluster, vmid, holder: null }]),
    release: (order) => Ref.update(state, (all) => all.filter((a) => a.holder !== order)),
    holders: (cluster) =>
      Effect.map(Ref.get(state), (all) =>
        new Map(all.flatMap((a) => a.cluster === cluster && a.holder !== null ? [[a.vmid, a.holder] as const] : [])))
  })
})

export const layer = Layer.effect(ProxmoxVmids, make)
