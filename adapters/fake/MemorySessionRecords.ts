// In-memory SessionRecords: the same contract as the Postgres repository, for domain tests.
import { Effect, Layer, Option, Ref } from "effect"
import type { SessionRecord } from "../../domain/account/SessionRecord.ts"
import { SessionRecords } from "../../ports/SessionRecords.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, SessionRecord>())
  /** Deletes the rows `doomed` picks, returning how many. */
  const removeWhere = (doomed: (s: SessionRecord) => boolean, limit = Infinity) =>
    Ref.modify(rows, (m): readonly [number, Map<string, SessionRecord>] => {
      const picked = [...m.values()].filter(doomed).sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime()).slice(0, limit)
      if (picked.length === 0) return [0, m]
      const next = new Map(m)
      for (const s of picked) next.delete(s.id)
      return [picked.length, next]
    })
  return SessionRecords.of({
    create: (session) => Ref.update(rows, (m) => new Map(m).set(session.id, session)),
    find: (id) => Effect.map(Ref.get(rows), (m) => Option.fromNullishOr(m.get(id))),
    touch: (id, at) =>
      Ref.update(rows, (m) => {
        const current = m.get(id)
        return current === undefined || current.lastSeenAt >= at ? m : new Map(m).set(id, { ...current, lastSeenAt: at })
      }),
    end: (id) => Effect.map(removeWhere((s) => s.id === id), (n) => n > 0),
    endAllOf: (userId) => removeWhere((s) => s.userId === userId),
    listOf: (userId, now) =>
      Effect.map(Ref.get(rows), (m) =>
        [...m.values()]
          .filter((s) => s.userId === userId && s.expiresAt > now)
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())),
    purgeExpired: (now, limit) => removeWhere((s) => s.expiresAt <= now, limit)
  })
})

export const layer = Layer.effect(SessionRecords, make)
