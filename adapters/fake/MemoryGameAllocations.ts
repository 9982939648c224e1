// In-memory GameAllocations: each claim is one atomic modify, which serialises claims like the panel lock.
import { Effect, Layer, Option, Ref } from "effect"
import type { AllocationClaim } from "../../domain/game/GameServer.ts"
import { GameAllocations } from "../../ports/GameAllocations.ts"

export const make = Effect.gen(function*() {
  /** In the order they were made, as the Postgres adapter lists them. */
  const claims = yield* Ref.make<ReadonlyArray<AllocationClaim>>([])
  return GameAllocations.of({
    claim: (panel, holder, choose) =>
      // `choose` is pure and synchronous, so running it inside the modify keeps the whole decision atomic.
      Ref.modify(claims, (all): readonly [Option.Option<AllocationClaim> | string, ReadonlyArray<AllocationClaim>] => {
        const existing = all.find((c) => c.holder === holder)
        if (existing !== undefined) return [Option.some(existing), all]
        const live = all.filter((c) => c.panel === panel)
        const chosen = choose(live)
        if (Option.isNone(chosen)) return [Option.none(), all]
        const { allocationId, diskMiB, memoryMiB, node } = chosen.value
        // Like the table's UNIQUE (panel, allocation_id): an allocation held twice is a bug in the caller.
        if (live.some((c) => c.allocationId === allocationId)) {
          return [`allocation ${allocationId} on panel ${panel} is already held by another claim`, all]
        }
        const claim: AllocationClaim = { holder, panel, node, allocationId, memoryMiB, diskMiB, created: false }
        return [Option.some(claim), [...all, claim]]
      }).pipe(Effect.flatMap((r) => typeof r === "string" ? Effect.die(r) : Effect.succeed(r))),
    onPanel: (panel) => Effect.map(Ref.get(claims), (all) => all.filter((c) => c.panel === panel)),
    held: (holder) => Effect.map(Ref.get(claims), (all) => Option.fromNullishOr(all.find((c) => c.holder === holder))),
    markCreated: (holder) =>
      Ref.update(claims, (all) => all.map((c) => c.holder === holder ? { ...c, created: true } : c)),
    release: (holder) => Ref.update(claims, (all) => all.filter((c) => c.holder !== holder))
  })
})

export const layer = Layer.effect(GameAllocations, make)
