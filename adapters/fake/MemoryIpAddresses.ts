// In-memory IpAddresses over MemoryCatalog's pools; the same contract as the Postgres one. Each call runs
// synchronously, so no two assignments can interleave.
import { Effect, Layer } from "effect"
import { type AssignedAddress, IpAddresses, PoolExhausted } from "../../ports/IpAddresses.ts"
import { type CatalogState, MemoryCatalogState, type PoolRow, sortedAddresses } from "./MemoryCatalog.ts"

const view = (pool: PoolRow, address: string): AssignedAddress => ({
  pool: pool.value.id,
  address,
  prefixLength: Number(pool.value.cidr.split("/")[1]),
  gateway: pool.value.gateway,
  bridge: pool.value.bridge
})

const heldBy = (state: CatalogState, holder: string) => {
  for (const pool of state.pools.values()) {
    for (const [address, row] of pool.addresses) if (row.holder === holder) return view(pool, address)
  }
  return undefined
}

export const make = (state: CatalogState) =>
  IpAddresses.of({
    assign: (holder, pools) =>
      Effect.suspend(() => {
        const existing = heldBy(state, holder)
        if (existing !== undefined) return Effect.succeed(existing)
        for (const id of pools) {
          const pool = state.pools.get(id)
          if (pool === undefined || pool.retired) continue
          const free = sortedAddresses(pool).find((a) => {
            const row = pool.addresses.get(a)
            return row?.holder === null && !row.withdrawn
          })
          const row = free === undefined ? undefined : pool.addresses.get(free)
          if (free === undefined || row === undefined) continue
          row.holder = holder
          return Effect.succeed(view(pool, free))
        }
        return Effect.fail(new PoolExhausted({ pools }))
      }),
    release: (holder) =>
      Effect.sync(() => {
        for (const pool of state.pools.values()) {
          for (const row of pool.addresses.values()) if (row.holder === holder) row.holder = null
        }
      }),
    held: (holder) => Effect.sync(() => heldBy(state, holder))
  })

/** Needs MemoryCatalog's state: `MemoryIpAddresses.layer.pipe(Layer.provideMerge(MemoryCatalog.layer))`. */
export const layer = Layer.effect(IpAddresses, Effect.map(MemoryCatalogState, make))
