// In-memory AuditLog: the same contract as the Postgres log (append only, newest first, keyset by id).
import { Effect, Layer, Ref } from "effect"
import { type AuditEvent, storableEntry } from "../../domain/audit/AuditEvent.ts"
import { AuditLog } from "../../ports/AuditLog.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make<ReadonlyArray<AuditEvent>>([])
  return AuditLog.of({
    append: (entry) => Ref.update(rows, (all) => [...all, { ...storableEntry(entry), id: String(all.length + 1) }]),
    list: (q) =>
      Effect.map(Ref.get(rows), (all) =>
        all
          .filter((e) =>
            (q.subjectUserId === undefined || e.subjectUserId === q.subjectUserId) &&
            (q.actorId === undefined || e.actorId === q.actorId) &&
            (q.actions === undefined || q.actions.includes(e.action)) &&
            (q.before === undefined || Number(e.id) < Number(q.before))
          )
          .reverse()
          .slice(0, q.limit))
  })
})

export const layer = Layer.effect(AuditLog, make)
