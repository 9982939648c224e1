// In-memory Outbox.
import { Effect, Layer, Ref } from "effect"
import { Outbox, type OutboxEntry } from "../../ports/Outbox.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make<{ readonly next: number; readonly entries: ReadonlyArray<OutboxEntry> }>({ next: 1, entries: [] })
  return Outbox.of({
    append: (message, sentAt, keep) =>
      Ref.update(rows, ({ entries, next }) => ({
        next: next + 1,
        entries: [{ ...message, id: next, sentAt }, ...entries].slice(0, keep)
      })),
    latest: (limit) => Effect.map(Ref.get(rows), ({ entries }) => entries.slice(0, limit))
  })
})

export const layer = Layer.effect(Outbox, make)
