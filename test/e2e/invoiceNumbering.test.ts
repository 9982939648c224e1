// The figures of issue 13 §4 on a real database (Postgres with TEST_DATABASE_URL, else embedded PGlite): 200
// concurrent payments → invoices 1…200 of their series, no gap, no duplicate, even with failed transactions among
// them; 50 concurrent refunds → credit notes 1…50; and the database itself refusing to change an issued invoice.
import { NodeCrypto } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import * as PgBillingProfiles from "../../adapters/postgres/PgBillingProfiles.ts"
import * as PgInvoices from "../../adapters/postgres/PgInvoices.ts"
import * as PgLedger from "../../adapters/postgres/PgLedger.ts"
import * as PgUnitOfWork from "../../adapters/postgres/PgUnitOfWork.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { quotePlanMonth, recordCharge, recordRefund } from "../../domain/billing/invoicing/issueDocuments.ts"
import { BillingProfiles } from "../../ports/BillingProfiles.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { chargeEntry, profileIn } from "../support/invoiceMother.ts"
import { testInvoicingSettings } from "../support/invoicing.ts"
import { testDatabase } from "../support/testServer.ts"
import { newUser } from "../support/userMother.ts"
import { vatRegistry } from "../support/sandboxRegistries.ts"

const env = Layer.mergeAll(PgLedger.layer, PgInvoices.layer, PgUsers.layer, PgUnitOfWork.layer, PgBillingProfiles.layer).pipe(
  Layer.provideMerge(testDatabase()),
  Layer.merge(Layer.mergeAll(testInvoicingSettings, vatRegistry, NodeCrypto.layerSecureRandom))
)

const month = { start: new Date("2031-03-01T10:00:00.000Z"), end: new Date("2031-04-01T10:00:00.000Z") }

/** Ten customers with a French billing profile, and the quote of a month of VPS S for each. */
const customers = Effect.gen(function*() {
  return yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) =>
    Effect.gen(function*() {
      const user = yield* (yield* Users).insert(newUser(`numbering-${i}-${randomUUID()}@example.com`))
      yield* (yield* BillingProfiles).save(profileIn(user.id, "FR"))
      return { user, quote: yield* quotePlanMonth(user, { name: "VPS S", priceCents: 1000 }, month) }
    }))
})

/** Every message along an error's causes (the driver's refusal sits a few levels under the SqlError). */
const messagesOf = (error: unknown): string => {
  const seen: Array<string> = []
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 6; depth++) {
    if ("message" in e) seen.push(String(e.message))
    e = "cause" in e ? e.cause : "reason" in e ? e.reason : undefined
  }
  return seen.join(" / ")
}

const sequencesOf = (numbers: ReadonlyArray<string>, series: string) =>
  numbers.filter((n) => n.startsWith(`${series}-`)).map((n) => Number(n.slice(series.length + 1))).sort((a, b) => a - b)

layer(env, { excludeTestServices: true, timeout: "300 seconds" })("invoice numbers under concurrency", (it) => {
  it.effect("200 concurrent payments, with 20 transactions failing among them, are invoiced 1…200: no gap, no duplicate", () =>
    Effect.gen(function*() {
      const buyers = yield* customers
      const unitOfWork = yield* UnitOfWork
      const started = Date.now()
      const outcomes = yield* Effect.forEach(Array.from({ length: 220 }, (_, i) => i), (i) => {
        const { quote, user } = buyers[i % buyers.length]!
        const entry = chargeEntry(user.id, { createdAt: new Date(Date.UTC(2031, 2, 1, 10, 0, 0, i)) })
        const payment = recordCharge(entry, quote)
        // Every eleventh payment's transaction fails after its invoice was numbered: the number must come back.
        return unitOfWork.transaction(i % 11 === 10 ? Effect.andThen(payment, Effect.fail("rolled back" as const)) : payment).pipe(
          Effect.map((invoice) => Option.getOrThrow(invoice)),
          Effect.catch(() => Effect.succeed(null))
        )
      }, { concurrency: "unbounded" })
      const elapsed = Date.now() - started
      const issued = outcomes.filter((invoice) => invoice !== null)
      assert.strictEqual(issued.length, 200)
      const stored = yield* (yield* SqlClient.SqlClient)<{ number: string; issued_at: Date }>`
        SELECT number, issued_at FROM invoices WHERE series = 'F2031' ORDER BY sequence`
      assert.deepStrictEqual(sequencesOf(stored.map((r) => r.number), "F2031"), Array.from({ length: 200 }, (_, i) => i + 1))
      assert.deepStrictEqual(sequencesOf(issued.map((i) => i.number), "F2031"), Array.from({ length: 200 }, (_, i) => i + 1))
      // Chronological: a later number never has an earlier issue date.
      for (let i = 1; i < stored.length; i++) assert.isAtLeast(stored[i]!.issued_at.getTime(), stored[i - 1]!.issued_at.getTime())
      console.info(`figure: 220 concurrent payment transactions (20 rolled back) → invoices F2031-000001…000200 in ${elapsed} ms`)

      const refunds = issued.slice(0, 50)
      const credited = yield* Effect.forEach(refunds, (invoice, i) =>
        unitOfWork.transaction(recordRefund(
          chargeEntry(invoice.userId, {
            kind: "refund",
            reference: `${invoice.ledgerReference}:re_${i}`,
            createdAt: new Date(Date.UTC(2031, 2, 2, 10, 0, 0, i))
          }),
          invoice.ledgerReference
        )).pipe(Effect.map(Option.getOrThrow)), { concurrency: "unbounded" })
      assert.deepStrictEqual(sequencesOf(credited.map((c) => c.number), "A2031"), Array.from({ length: 50 }, (_, i) => i + 1))
      assert.deepStrictEqual(new Set(credited.map((c) => c.correctsInvoiceId)), new Set(refunds.map((r) => r.id)))
    }))

  it.effect("the database refuses to update, delete or truncate an issued invoice", () =>
    Effect.gen(function*() {
      const { quote, user } = (yield* customers)[0]!
      const invoice = Option.getOrThrow(yield* (yield* UnitOfWork).transaction(recordCharge(chargeEntry(user.id), quote)))
      const sql = yield* SqlClient.SqlClient
      const refusals = yield* Effect.forEach([
        sql`UPDATE invoices SET total_including_vat_cents = 1 WHERE id = ${invoice.id}`,
        sql`UPDATE invoices SET buyer = '{}'::jsonb`,
        sql`DELETE FROM invoices WHERE id = ${invoice.id}`,
        sql`TRUNCATE invoices CASCADE`
      ], (statement) => Effect.map(Effect.flip(statement), messagesOf))
      for (const message of refusals) assert.include(message, "invoices are immutable")
      const [row] = yield* sql<{ total: number }>`SELECT total_including_vat_cents AS total FROM invoices WHERE id = ${invoice.id}`
      assert.strictEqual(row?.total, invoice.totalIncludingVatCents)
    }))
})

