// In-memory Renewals: each move is one atomic modify, so concurrent passes act once, as on Postgres.
import { Effect, Layer, Option, Ref } from "effect"
import { type RenewalRecord, Renewals } from "../../ports/Renewals.ts"

interface Row extends RenewalRecord {
  readonly claimedUntil: Date | null
}

const keyOf = (subscriptionId: string, periodStart: Date) => `${subscriptionId}@${periodStart.toISOString()}`

const recordOf = ({ claimedUntil: _, ...record }: Row): RenewalRecord => record

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make<ReadonlyMap<string, Row>>(new Map())
  /** Replaces the row when `f` returns one; answers the new row, if it did. */
  const change = (subscriptionId: string, periodStart: Date, f: (row: Row) => Row | undefined) =>
    Ref.modify(rows, (m): readonly [Option.Option<Row>, ReadonlyMap<string, Row>] => {
      const key = keyOf(subscriptionId, periodStart)
      const current = m.get(key)
      const next = current === undefined ? undefined : f(current)
      return next === undefined ? [Option.none(), m] : [Option.some(next), new Map(m).set(key, next)]
    })
  const get = (subscriptionId: string, periodStart: Date) =>
    Effect.map(Ref.get(rows), (m) => Option.map(Option.fromNullishOr(m.get(keyOf(subscriptionId, periodStart))), recordOf))

  return Renewals.of({
    open: ({ amountCents, periodStart, subscriptionId }) =>
      Ref.modify(rows, (m): readonly [RenewalRecord, ReadonlyMap<string, Row>] => {
        const key = keyOf(subscriptionId, periodStart)
        const known = m.get(key)
        if (known !== undefined) return [recordOf(known), m]
        const row: Row = {
          subscriptionId,
          periodStart,
          amountCents,
          status: "scheduled",
          attempts: 0,
          lastFailure: null,
          nextAttemptAt: periodStart,
          payUrl: null,
          chargeReference: null,
          remindedAt: null,
          paidAt: null,
          claimedUntil: null
        }
        return [recordOf(row), new Map(m).set(key, row)]
      }),
    get,
    latest: (ids) =>
      Effect.map(Ref.get(rows), (m) => {
        const latest = new Map<string, Row>()
        for (const row of m.values()) {
          const known = latest.get(row.subscriptionId)
          if (ids.includes(row.subscriptionId) && (known === undefined || known.periodStart < row.periodStart)) {
            latest.set(row.subscriptionId, row)
          }
        }
        return [...latest.values()].map(recordOf)
      }),
    markReminded: (subscriptionId, periodStart, now) =>
      Effect.map(change(subscriptionId, periodStart, (r) => r.remindedAt === null ? { ...r, remindedAt: now } : undefined), Option.isSome),
    claim: (subscriptionId, periodStart, now, until) =>
      Effect.map(
        change(subscriptionId, periodStart, (r) =>
          (r.status === "scheduled" || r.status === "retrying") && r.nextAttemptAt !== null &&
            r.nextAttemptAt.getTime() <= now.getTime() && (r.claimedUntil === null || r.claimedUntil.getTime() <= now.getTime())
            ? { ...r, claimedUntil: until }
            : undefined),
        Option.map(recordOf)
      ),
    recordFailure: (f) =>
      Effect.map(
        change(f.subscriptionId, f.periodStart, (r) =>
          r.attempts === f.attempts && r.status !== "paid"
            ? {
              ...r,
              status: f.status,
              attempts: r.attempts + 1,
              lastFailure: f.reason,
              nextAttemptAt: f.nextAttemptAt,
              payUrl: f.payUrl ?? r.payUrl,
              claimedUntil: null
            }
            : undefined),
        Option.isSome
      ),
    markPaid: (subscriptionId, periodStart, chargeReference, now) =>
      Effect.map(
        change(subscriptionId, periodStart, (r) =>
          r.status === "paid"
            ? undefined
            : { ...r, status: "paid", chargeReference, paidAt: now, nextAttemptAt: null, claimedUntil: null }),
        Option.isSome
      ),
    release: (subscriptionId, periodStart) =>
      Effect.asVoid(change(subscriptionId, periodStart, (r) => ({ ...r, claimedUntil: null })))
  })
})

export const layer = Layer.effect(Renewals, make)
