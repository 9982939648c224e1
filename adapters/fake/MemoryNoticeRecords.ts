// In-memory NoticeRecords: each operation is one Ref.modify, so racing fibers see the same single winner as Postgres.
import { Effect, Layer, Option, Ref } from "effect"
import { NoticeRecords, type PendingNotice } from "../../ports/NoticeRecords.ts"

interface Row extends PendingNotice {
  readonly tag: string
  readonly createdAt: Date
  readonly sentAt: Date | null
  readonly nextAttemptAt: Date | null
  readonly lastError: string | null
}

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make<ReadonlyMap<string, Row>>(new Map())
  const pending = ({ attempts, key, payload, userId }: Row): PendingNotice => ({ key, userId, payload, attempts })
  const entry = ({ attempts, createdAt, key, lastError, payload, sentAt, tag, userId }: Row) =>
    ({ key, userId, tag, createdAt, sentAt, attempts, lastError, payload })
  const update = (key: string, change: (row: Row) => Row) =>
    Ref.update(rows, (all) => {
      const row = all.get(key)
      return row === undefined || row.sentAt !== null ? all : new Map(all).set(key, change(row))
    })
  return NoticeRecords.of({
    record: (entry) =>
      Ref.modify(rows, (all) => {
        if (all.has(entry.key)) return [null, all]
        const row: Row = {
          key: entry.key,
          userId: entry.userId,
          payload: entry.payload,
          tag: entry.tag,
          createdAt: entry.createdAt,
          attempts: 1,
          sentAt: null,
          nextAttemptAt: entry.leaseUntil,
          lastError: null
        }
        return [pending(row), new Map(all).set(entry.key, row)]
      }),
    claimDue: (now, leaseUntil, limit) =>
      Ref.modify(rows, (all) => {
        const due = [...all.values()]
          .filter((r) => r.sentAt === null && r.nextAttemptAt !== null && r.nextAttemptAt.getTime() <= now.getTime())
          .sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime())
          .slice(0, limit)
          .map((r) => ({ ...r, attempts: r.attempts + 1, nextAttemptAt: leaseUntil }))
        const next = new Map(all)
        for (const r of due) next.set(r.key, r)
        return [due.map(pending), next]
      }),
    // In memory every write stands at once (IdentityUnitOfWork has no rollback).
    afterCommit: (effect) => effect,
    markSent: (key, at) => update(key, (row) => ({ ...row, sentAt: at, nextAttemptAt: null, lastError: null })),
    unsent: (limit) =>
      Effect.map(Ref.get(rows), (all) =>
        [...all.values()]
          .filter((r) => r.sentAt === null)
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.key.localeCompare(b.key))
          .slice(0, limit)
          .map(({ attempts, createdAt, key, lastError, nextAttemptAt, tag }) => ({ key, tag, createdAt, attempts, lastError, nextAttemptAt }))),
    find: (key) => Effect.map(Ref.get(rows), (all) => Option.map(Option.fromNullishOr(all.get(key)), entry)),
    ofUser: (userId, limit) =>
      Effect.map(Ref.get(rows), (all) =>
        [...all.values()]
          .filter((r) => r.userId === userId)
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.key.localeCompare(b.key))
          .slice(0, limit)
          .map(entry)),
    markFailed: (key, error, retryAt) => update(key, (row) => ({ ...row, lastError: error, nextAttemptAt: retryAt }))
  })
})

export const layer = Layer.effect(NoticeRecords, make)
