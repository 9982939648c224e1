// In-memory LoginAttempts: fixed windows per key, updated atomically.
import { Effect, Layer, Ref } from "effect"
import { type AttemptWindow, LoginAttempts } from "../../ports/LoginAttempts.ts"

interface Row {
  readonly count: number
  /** Fixed by the hit that opened the window. */
  readonly windowEnd: number
}

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Row>())
  return LoginAttempts.of({
    hit: (key, now, windowMillis) =>
      Ref.modify(rows, (m): readonly [AttemptWindow, Map<string, Row>] => {
        const row = m.get(key)
        const t = now.getTime()
        const next: Row = row !== undefined && row.windowEnd > t
          ? { ...row, count: row.count + 1 }
          : { count: 1, windowEnd: t + windowMillis }
        return [{ count: next.count, resetsAt: new Date(next.windowEnd) }, new Map(m).set(key, next)]
      }),
    undo: (key) =>
      Ref.update(rows, (m) => {
        const row = m.get(key)
        return row === undefined ? m : new Map(m).set(key, { ...row, count: Math.max(0, row.count - 1) })
      }),
    clear: (key) =>
      Ref.update(rows, (m) => {
        const next = new Map(m)
        next.delete(key)
        return next
      })
  })
})

export const layer = Layer.effect(LoginAttempts, make)
