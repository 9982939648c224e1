// Operators' refund requests in Postgres: a reservation holds its charge's ledger row (FOR UPDATE), then counts what
// was given back and what is reserved, so concurrent requests are decided one after the other.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { type RefundRequest, RefundRequests, type Reservation } from "../../ports/RefundRequests.ts"
import { snakeColumns } from "./columns.ts"
import { stored } from "./failures.ts"

const NewRequest = Schema.Struct({
  id: Schema.String,
  chargeId: Schema.String,
  idempotencyKey: Schema.String,
  amountCents: Schema.Int,
  reason: Schema.String,
  requestedBy: Schema.String,
  requestedAt: Schema.Date
})
const NewRequestRow = snakeColumns(NewRequest)
const RequestRow = snakeColumns(Schema.Struct({ ...NewRequest.fields, refundEntryId: Schema.NullOr(Schema.String) }))
const Charge = Schema.Struct({ amount_cents: Schema.Int, taken: Schema.NumberFromString })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /**
   * The charge with what is taken of it: every refund of it in the ledger (their reference starts with the charge's)
   * and every request still pending (a completed one is counted by its ledger entry).
   */
  const charge = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: Charge,
    execute: (id) =>
      sql`SELECT c.amount_cents,
                 ((SELECT coalesce(sum(r.amount_cents), 0) FROM ledger_entries r
                    WHERE r.user_id = c.user_id AND r.kind = 'refund' AND starts_with(r.reference, c.reference || ':'))
                + (SELECT coalesce(sum(q.amount_cents), 0) FROM refund_requests q
                    WHERE q.charge_id = c.id AND q.refund_entry_id IS NULL))::text AS taken
          FROM ledger_entries c WHERE c.id = ${id} AND c.kind = 'charge'`
  })
  /**
   * Holds the charge's row until the transaction ends. Its own statement: a statement that waited for the lock reads
   * with the snapshot it started with, so what is taken is counted by the next statement, which sees what the
   * transaction that held the lock committed.
   */
  const lock = (id: string) => sql`SELECT id FROM ledger_entries WHERE id = ${id} AND kind = 'charge' FOR UPDATE`
  const byKey = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: RequestRow,
    execute: (key) => sql`SELECT * FROM refund_requests WHERE idempotency_key = ${key}`
  })
  const insert = SqlSchema.findAll({
    Request: NewRequestRow,
    Result: RequestRow,
    execute: (row) => sql`INSERT INTO refund_requests ${sql.insert(row)} ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`
  })
  const same = (a: RefundRequest, b: Omit<RefundRequest, "refundEntryId">) => a.chargeId === b.chargeId && a.amountCents === b.amountCents
  const reserve = (request: Omit<RefundRequest, "refundEntryId">) =>
    Effect.gen(function*() {
      yield* lock(request.chargeId)
      const found = yield* charge(request.chargeId)
      if (Option.isNone(found)) return { _tag: "NoSuchCharge" } as const
      const earlier = yield* byKey(request.idempotencyKey)
      if (Option.isSome(earlier)) {
        return same(earlier.value, request) ? { _tag: "Replayed", request: earlier.value } as const : { _tag: "KeyReused" } as const
      }
      const refundableCents = found.value.amount_cents - found.value.taken
      if (request.amountCents > refundableCents) return { _tag: "Exceeds", refundableCents } as const
      const [inserted] = yield* insert(request)
      // The key was taken meanwhile by a request for another charge (this charge's are serialised by the lock).
      return inserted === undefined ? { _tag: "KeyReused" } as const : { _tag: "Reserved", request: inserted } as const
    })
  return RefundRequests.of({
    reserve: (request) =>
      sql.withTransaction(reserve(request)).pipe(
        Effect.map((reservation): Reservation => reservation),
        stored
      ),
    complete: (id, refundEntryId) =>
      sql`UPDATE refund_requests SET refund_entry_id = ${refundEntryId} WHERE id = ${id} AND refund_entry_id IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), stored),
    refundable: (chargeId) =>
      charge(chargeId).pipe(
        Effect.map(Option.match({ onNone: () => 0, onSome: (c) => c.amount_cents - c.taken })),
        stored
      )
  })
})

export const layer = Layer.effect(RefundRequests, make)
