// `npm run admin -- invoices export --from --to` and `invoices oss`, in-process on the in-memory documents: the CSV the
// accountant receives (VAT per rate and per customer country, credit notes negative) and the year's OSS total.
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryInvoices from "../../adapters/fake/MemoryInvoices.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { HEADER } from "../../domain/billing/invoicing/accountantExport.ts"
import { seriesOf } from "../../domain/billing/invoicing/Invoice.ts"
import { Invoices } from "../../ports/Invoices.ts"
import { Redacted } from "effect"
import { invoiceDraft } from "../support/invoiceMother.ts"

const user = "00000000-0000-4000-8000-000000000009"

/** Three documents of 2026 in France and Germany, one credit note, and one of 2027 (31 December 23:30 UTC). */
const seeded = Effect.gen(function*() {
  const invoices = yield* Invoices
  const issue = (draft: ReturnType<typeof invoiceDraft>) => invoices.issue(draft, seriesOf(draft.kind, draft.issuedAt))
  const french = yield* issue(invoiceDraft(user, { issuedAt: new Date("2026-03-01T10:00:00.000Z") }))
  yield* issue(invoiceDraft(user, {
    issuedAt: new Date("2026-03-02T10:00:00.000Z"),
    buyer: { ...french.buyer, name: "Max Muster, \"GmbH\"", address: { ...french.buyer.address, country: "DE" } },
    lines: [{ description: "VPS S", quantity: 1, unitPriceExcludingVatCents: 1000, vatCategory: "S", vatRateBasisPoints: 1900, totalExcludingVatCents: 1000 }],
    vatBreakdown: [{ vatCategory: "S", vatRateBasisPoints: 1900, baseCents: 1000, vatCents: 190 }],
    vatCents: 190,
    totalIncludingVatCents: 1190,
    taxCountry: "DE",
    countsTowardsOss: true
  }))
  yield* issue(invoiceDraft(user, {
    kind: "credit_note", issuedAt: new Date("2026-03-03T10:00:00.000Z"), correctsInvoiceId: french.id,
    correctsNumber: french.number, ledgerKind: "refund"
  }))
  yield* issue(invoiceDraft(user, { issuedAt: new Date("2026-12-31T23:30:00.000Z") }))
})

const run = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const services = Layer.mergeAll(
      MemoryOutbox.layer,
      MemoryUpstreamSecrets.layer,
      AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(1)), previous: [] }),
      Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make("")) })
    )
    const invoices = Layer.succeed(Invoices, yield* Invoices)
    const cli = makeAdmin(services, Effect.succeed([]), undefined, undefined, undefined, undefined, invoices)
    yield* Command.runWith(cli, { version: "test" })(args)
    return (yield* TestConsole.logLines).map(String).join("\n")
  })

const inCli = <A, E>(effect: Effect.Effect<A, E, Invoices | NodeServices.NodeServices | TestConsole.TestConsole>) =>
  effect.pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer, MemoryInvoices.layer)))

describe("admin CLI: invoices", () => {
  it.effect("export: one row per document and rate in French days, credit notes negative, then totals per country and rate", () =>
    inCli(Effect.gen(function*() {
      yield* seeded
      const csv = (yield* run(["invoices", "export", "--from", "2026-03-01", "--to", "2026-12-31"])).split("\n")
      assert.strictEqual(csv[0], HEADER.join(","))
      assert.deepStrictEqual(csv.slice(1, 4).map((row) => row.split(",").slice(0, 2)), [
        ["F2026-000001", "invoice"],
        ["F2026-000002", "invoice"],
        ["A2026-000001", "credit_note"]
      ])
      assert.include(csv[2], '"Max Muster, ""GmbH"""')
      assert.include(csv[3], ",S,20,-10.00,-2.00,-12.00,")
      // The 31 December 23:30 UTC invoice is issued on 1 January 2027 in France: not in 2026's export.
      assert.notInclude(csv.join("\n"), "F2027")
      assert.deepStrictEqual(csv.slice(4), [
        "TOTAL,total,,,,DE,,,S,19,10.00,1.90,11.90,,,",
        "TOTAL,total,,,,FR,,,S,20,0.00,0.00,0.00,,,"
      ])
    })))

  it.effect("oss: the year's cross-border consumer sales, excluding VAT", () =>
    inCli(Effect.gen(function*() {
      yield* seeded
      assert.include(yield* run(["invoices", "oss", "--year", "2026"]), "OSS 2026: 10.00 EUR")
    })))

  it.effect("export refuses a date that is not one, naming it", () =>
    inCli(Effect.gen(function*() {
      yield* Effect.flip(run(["invoices", "export", "--from", "2026-02-30", "--to", "2026-03-01"]))
      const said = [...yield* TestConsole.errorLines, ...yield* TestConsole.logLines].map(String).join("\n")
      assert.include(said, "must be a date such as 2026-01-31")
    })))
})
