// In-memory Invoices with the table's guarantees: gapless numbers per series, issue dates that never go back within
// a series, one document per ledger entry, and nothing ever changed once issued.
import { Effect, Layer, Option, Ref } from "effect"
import { formatNumber, Invoice, type InvoiceDraft } from "../../domain/billing/invoicing/Invoice.ts"
import { Invoices } from "../../ports/Invoices.ts"

interface State {
  readonly series: ReadonlyMap<string, { readonly last: number; readonly lastIssuedAt: Date }>
  readonly invoices: ReadonlyArray<{ readonly invoice: Invoice; readonly year: number }>
}

const newestFirst = (a: Invoice, b: Invoice) =>
  b.issuedAt.getTime() - a.issuedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

export const make = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ series: new Map(), invoices: [] })
  const all = Effect.map(Ref.get(state), (s) => s.invoices.map((row) => row.invoice))
  const find = (keep: (invoice: Invoice) => boolean) => Effect.map(all, (list) => Option.fromNullishOr(list.find(keep)))

  const issue = (draft: InvoiceDraft, series: string) =>
    Ref.modify(state, (s): readonly [Invoice | string, State] => {
      if (s.invoices.some((row) => row.invoice.ledgerKind === draft.ledgerKind && row.invoice.ledgerReference === draft.ledgerReference)) {
        return [`a document for ${draft.ledgerKind} ${draft.ledgerReference} exists`, s]
      }
      const counter = s.series.get(series)
      const last = (counter?.last ?? 0) + 1
      const issuedAt = counter !== undefined && counter.lastIssuedAt > draft.issuedAt ? counter.lastIssuedAt : draft.issuedAt
      const invoice = new Invoice({ ...draft, number: formatNumber(series, last), issuedAt })
      return [invoice, {
        series: new Map(s.series).set(series, { last, lastIssuedAt: issuedAt }),
        invoices: [...s.invoices, { invoice, year: Number(series.slice(1)) }]
      }]
    }).pipe(Effect.flatMap((outcome) => typeof outcome === "string" ? Effect.die(outcome) : Effect.succeed(outcome)))

  return Invoices.of({
    issue,
    get: (id) => find((invoice) => invoice.id === id),
    forLedgerEntry: (kind, reference) => find((i) => i.ledgerKind === kind && i.ledgerReference === reference),
    forUser: (userId, after, limit) =>
      Effect.map(all, (list) =>
        list
          .filter((i) => i.userId === userId)
          // (issued_at, id) < (after.issuedAt, after.id), as the SQL compares them.
          .filter((i) =>
            after === null || i.issuedAt.getTime() < after.issuedAt.getTime() ||
            (i.issuedAt.getTime() === after.issuedAt.getTime() && i.id < after.id)
          )
          .sort(newestFirst)
          .slice(0, limit)),
    issuedBetween: (from, to) =>
      Effect.map(all, (list) =>
        list.filter((i) => i.issuedAt >= from && i.issuedAt < to)
          .sort((a, b) => a.issuedAt.getTime() - b.issuedAt.getTime() || (a.id < b.id ? -1 : 1))),
    ossTotal: (year) =>
      Effect.map(Ref.get(state), (s) =>
        s.invoices
          .filter((row) => row.year === year && row.invoice.countsTowardsOss)
          .reduce((sum, { invoice }) => sum + (invoice.kind === "invoice" ? 1 : -1) * invoice.totalExcludingVatCents, 0))
  })
})

export const layer = Layer.effect(Invoices, make)
