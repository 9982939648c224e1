// In-memory UpstreamSecrets.
import { Effect, Layer, Option, Ref } from "effect"
import { type StoredSecret, UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, StoredSecret>())
  const sorted = Effect.map(Ref.get(rows), (m) => [...m.values()].sort((a, b) => (a.name < b.name ? -1 : 1)))
  return UpstreamSecrets.of({
    put: (name, sealed, updatedAt) => Ref.update(rows, (m) => new Map(m).set(name, { name, sealed, updatedAt })),
    get: (name) => Effect.map(Ref.get(rows), (m) => Option.fromNullishOr(m.get(name))),
    list: Effect.map(sorted, (all) => all.map(({ name, updatedAt }) => ({ name, updatedAt }))),
    remove: (name) =>
      Ref.modify(rows, (m): readonly [boolean, Map<string, StoredSecret>] => {
        if (!m.has(name)) return [false, m]
        const next = new Map(m)
        next.delete(name)
        return [true, next]
      }),
    all: sorted
  })
})

export const layer = Layer.effect(UpstreamSecrets, make)
