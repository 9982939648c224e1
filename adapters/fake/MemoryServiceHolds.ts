// In-memory ServiceHolds: each operation is one Ref.modify, so racing fibers see one winner, as with the index.
import { Effect, Layer, Option, Ref } from "effect"
import { ServiceHold } from "../../domain/billing/ServiceHold.ts"
import { ServiceHolds } from "../../ports/ServiceHolds.ts"

export const make = Effect.gen(function*() {
  const holds = yield* Ref.make<ReadonlyArray<ServiceHold>>([])
  const inForceIn = (all: ReadonlyArray<ServiceHold>, subscriptionId: string) =>
    all.find((h) => h.subscriptionId === subscriptionId && h.liftedAt === null)
  return ServiceHolds.of({
    place: (hold) =>
      Ref.modify(holds, (all): readonly [{ hold: ServiceHold; placed: boolean }, ReadonlyArray<ServiceHold>] => {
        const current = inForceIn(all, hold.subscriptionId)
        return current === undefined ? [{ hold, placed: true }, [...all, hold]] : [{ hold: current, placed: false }, all]
      }),
    lift: (subscriptionId, { at, by, reason }) =>
      Ref.modify(holds, (all): readonly [Option.Option<ServiceHold>, ReadonlyArray<ServiceHold>] => {
        const current = inForceIn(all, subscriptionId)
        if (current === undefined) return [Option.none(), all]
        const lifted = new ServiceHold({ ...current, liftedBy: by, liftedAt: at, liftReason: reason })
        return [Option.some(lifted), all.map((h) => (h === current ? lifted : h))]
      }),
    inForce: (subscriptionId) => Effect.map(Ref.get(holds), (all) => Option.fromNullishOr(inForceIn(all, subscriptionId))),
    history: (subscriptionId) =>
      Effect.map(Ref.get(holds), (all) =>
        all.filter((h) => h.subscriptionId === subscriptionId).sort((a, b) => b.placedAt.getTime() - a.placedAt.getTime()))
  })
})

export const layer = Layer.effect(ServiceHolds, make)
