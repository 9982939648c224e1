// One Invoices contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres: numbers
// per series and year without gaps, issue dates that never go back, lookups, keyset pages, the export and OSS totals.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryInvoices from "../../adapters/fake/MemoryInvoices.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgInvoices from "../../adapters/postgres/PgInvoices.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { type InvoiceDraft, seriesOf } from "../../domain/billing/invoicing/Invoice.ts"
import { Invoices } from "../../ports/Invoices.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { invoiceDraft } from "../support/invoiceMother.ts"
import { newUser } from "../support/userMother.ts"

const customer = Effect.map(
  Effect.flatMap(Users, (users) => users.insert(newUser(`invoices-${randomUUID()}@example.com`))),
  (user) => user.id
)

/** Years no other test of the suite uses (a backend is shared by the tests of one contract); two apart. */
let lastYear = 3000
const freshYear = () => (lastYear += 2)
const at = (year: number, rest = "-03-01T10:00:00.000Z") => new Date(`${year}${rest}`)

const issue = (draft: InvoiceDraft) => Effect.flatMap(Invoices, (invoices) => invoices.issue(draft, seriesOf(draft.kind, draft.issuedAt)))

const contract = (name: string, impl: Layer.Layer<Invoices | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("numbers each kind in its own series per year, from 1, and the year's first document starts again at 1", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const year = freshYear()
        const first = yield* issue(invoiceDraft(userId, { issuedAt: at(year) }))
        const second = yield* issue(invoiceDraft(userId, { issuedAt: at(year, "-03-02T10:00:00.000Z") }))
        const credit = yield* issue(invoiceDraft(userId, {
          kind: "credit_note", issuedAt: at(year, "-03-03T10:00:00.000Z"), correctsInvoiceId: first.id,
          correctsNumber: first.number, ledgerKind: "refund"
        }))
        const nextYear = yield* issue(invoiceDraft(userId, { issuedAt: at(year + 1, "-01-01T00:30:00.000+01:00") }))
        assert.deepStrictEqual(
          [first.number, second.number, credit.number, nextYear.number],
          [`F${year}-000001`, `F${year}-000002`, `A${year}-000001`, `F${year + 1}-000001`]
        )
      }))

    it.effect("the year of a series is France's: 31 December 23:30 UTC is already next year in Paris", () =>
      Effect.sync(() => assert.strictEqual(seriesOf("invoice", new Date("2026-12-31T23:30:00.000Z")), "F2027")))

    it.effect("an issue date never goes back within a series: a draft dated earlier takes the last one's date", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const year = freshYear()
        const later = yield* issue(invoiceDraft(userId, { issuedAt: at(year, "-06-01T10:00:00.000Z") }))
        const earlier = yield* issue(invoiceDraft(userId, { issuedAt: at(year, "-05-01T10:00:00.000Z") }))
        assert.deepStrictEqual(earlier.issuedAt, later.issuedAt)
        assert.isTrue(earlier.number > later.number)
      }))

    it.effect("a document reads back whole, by id and by its ledger entry", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const issued = yield* issue(invoiceDraft(userId, { issuedAt: at(freshYear()) }))
        const invoices = yield* Invoices
        assert.deepStrictEqual(Option.getOrThrow(yield* invoices.get(issued.id)), issued)
        assert.deepStrictEqual(Option.getOrThrow(yield* invoices.forLedgerEntry("charge", issued.ledgerReference)), issued)
        assert.isTrue(Option.isNone(yield* invoices.forLedgerEntry("refund", issued.ledgerReference)))
        assert.isTrue(Option.isNone(yield* invoices.get(randomUUID())))
      }))

    it.effect("a customer's documents page newest first, each page after the last one's (issuedAt, id), no one else's", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const other = yield* customer
        const year = freshYear()
        const issued = []
        for (let day = 1; day <= 5; day++) {
          issued.push(yield* issue(invoiceDraft(userId, { issuedAt: at(year, `-04-0${day}T10:00:00.000Z`) })))
        }
        yield* issue(invoiceDraft(other, { issuedAt: at(year, "-04-09T10:00:00.000Z") }))
        const invoices = yield* Invoices
        const page1 = yield* invoices.forUser(userId, null, 2)
        const last1 = page1[page1.length - 1]!
        const page2 = yield* invoices.forUser(userId, { issuedAt: last1.issuedAt, id: last1.id }, 2)
        const last2 = page2[page2.length - 1]!
        const page3 = yield* invoices.forUser(userId, { issuedAt: last2.issuedAt, id: last2.id }, 2)
        assert.deepStrictEqual([...page1, ...page2, ...page3].map((i) => i.number), issued.reverse().map((i) => i.number))
      }))

    it.effect("the export lists what was issued in [from, to), oldest first; the OSS total is invoices minus credit notes", () =>
      Effect.gen(function*() {
        const userId = yield* customer
        const year = freshYear()
        const oss = { countsTowardsOss: true, taxCountry: "DE" }
        const a = yield* issue(invoiceDraft(userId, { ...oss, issuedAt: at(year, "-02-01T10:00:00.000Z") }))
        yield* issue(invoiceDraft(userId, { ...oss, issuedAt: at(year, "-02-02T10:00:00.000Z"), totalExcludingVatCents: 3000, vatCents: 570, totalIncludingVatCents: 3570 }))
        yield* issue(invoiceDraft(userId, { issuedAt: at(year, "-02-03T10:00:00.000Z") }))
        yield* issue(invoiceDraft(userId, {
          ...oss, kind: "credit_note", issuedAt: at(year, "-02-04T10:00:00.000Z"), correctsInvoiceId: a.id,
          correctsNumber: a.number, ledgerKind: "refund", totalExcludingVatCents: 400, vatCents: 80, totalIncludingVatCents: 480
        }))
        const invoices = yield* Invoices
        assert.strictEqual(yield* invoices.ossTotal(year), 1000 + 3000 - 400)
        assert.strictEqual(yield* invoices.ossTotal(year + 1), 0)
        const between = yield* invoices.issuedBetween(at(year, "-02-02T00:00:00.000Z"), at(year, "-02-04T00:00:00.000Z"))
        assert.deepStrictEqual(between.map((i) => i.number), [`F${year}-000002`, `F${year}-000003`])
      }))
  })

describe("Invoices contract", () => {
  contract("in memory", Layer.mergeAll(MemoryInvoices.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, Layer.mergeAll(PgInvoices.layer, PgUsers.layer).pipe(Layer.provide(db)))
  }
})
