// The billing profile's and the invoices' routes: the domain's profile and documents as the contract's views.
import { Effect } from "effect"
import type { Invoice } from "../../domain/billing/invoicing/Invoice.ts"
import { invoicePdf, invoiceXml, listInvoices, ownedInvoice } from "../../domain/billing/invoicing/viewInvoices.ts"
import { HttpApiBuilder } from "effect/http-api"
import type { BillingProfile } from "../../domain/billing/invoicing/BillingProfile.ts"
import { saveBillingProfile, viewBillingProfile } from "../../domain/billing/invoicing/manageBillingProfile.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"
import type { BillingProfileView, InvoiceView } from "./views.ts"

const present = <K extends string, V>(key: K, value: V | null) =>
  (value === null ? {} : { [key]: value }) as { readonly [P in K]?: V }

export const billingProfileView = (profile: BillingProfile, saved: boolean): typeof BillingProfileView.Type => ({
  name: profile.name,
  ...present("companyName", profile.companyName),
  address: {
    line1: profile.address.line1,
    ...present("line2", profile.address.line2),
    postcode: profile.address.postcode,
    city: profile.address.city,
    country: profile.address.country
  },
  ...present("vatNumber", profile.vatNumber),
  ...present(
    "vatNumberCheck",
    profile.vatCheck === null ? null : {
      status: profile.vatCheck.status,
      checkedAt: profile.vatCheck.checkedAt.toISOString(),
      ...present("requestIdentifier", profile.vatCheck.requestIdentifier)
    }
  ),
  saved
})

export const BillingProfileHandlers = HttpApiBuilder.group(Api, "billingProfile", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<
    Effect.Services<ReturnType<typeof viewBillingProfile>> | Effect.Services<ReturnType<typeof saveBillingProfile>>
  >()
  return handlers
    .handle("get", () =>
      Effect.flatMap(CurrentSession, (session) => viewBillingProfile(session.user)).pipe(
        Effect.map(({ profile, saved }) => billingProfileView(profile, saved)),
        Effect.provideContext(services),
        mapDomainErrors
      ))
    .handle("save", ({ payload }) =>
      Effect.flatMap(CurrentSession, (session) => saveBillingProfile(session.user, payload)).pipe(
        Effect.map((profile) => billingProfileView(profile, true)),
        Effect.provideContext(services),
        mapDomainErrors
      ))
}))

const addressView = (a: Invoice["buyer"]["address"]) => ({
  line1: a.line1,
  ...present("line2", a.line2),
  postcode: a.postcode,
  city: a.city,
  country: a.country
})

export const invoiceView = (invoice: Invoice): typeof InvoiceView.Type => ({
  id: invoice.id,
  kind: invoice.kind,
  number: invoice.number,
  issuedAt: invoice.issuedAt.toISOString(),
  ...present("correctsInvoiceId", invoice.correctsInvoiceId),
  ...present("correctsNumber", invoice.correctsNumber),
  currency: invoice.currency,
  ...present("periodStart", invoice.periodStart?.toISOString() ?? null),
  ...present("periodEnd", invoice.periodEnd?.toISOString() ?? null),
  lines: invoice.lines.map((line) => ({
    description: line.description,
    quantity: line.quantity,
    unitPriceExcludingVatCents: line.unitPriceExcludingVatCents,
    vatCategory: line.vatCategory,
    vatRatePercent: line.vatRateBasisPoints / 100,
    totalExcludingVatCents: line.totalExcludingVatCents
  })),
  vatBreakdown: invoice.vatBreakdown.map((group) => ({
    vatCategory: group.vatCategory,
    vatRatePercent: group.vatRateBasisPoints / 100,
    baseCents: group.baseCents,
    vatCents: group.vatCents
  })),
  totalExcludingVatCents: invoice.totalExcludingVatCents,
  vatCents: invoice.vatCents,
  totalIncludingVatCents: invoice.totalIncludingVatCents,
  mentions: invoice.mentions,
  seller: {
    companyName: invoice.seller.companyName,
    legalForm: invoice.seller.legalForm,
    shareCapitalCents: invoice.seller.shareCapitalCents,
    address: addressView(invoice.seller.address),
    siren: invoice.seller.siren,
    siret: invoice.seller.siret,
    rcs: invoice.seller.rcs,
    vatNumber: invoice.seller.vatNumber
  },
  buyer: {
    name: invoice.buyer.name,
    ...present("companyName", invoice.buyer.companyName),
    address: addressView(invoice.buyer.address),
    ...present("vatNumber", invoice.buyer.vatNumber),
    ...present("siren", invoice.buyer.siren)
  },
  paidAt: invoice.settlement.at.toISOString()
})

export const InvoicesHandlers = HttpApiBuilder.group(Api, "invoices", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<
    | Effect.Services<ReturnType<typeof listInvoices>>
    | Effect.Services<ReturnType<typeof invoicePdf>>
    | Effect.Services<ReturnType<typeof invoiceXml>>
  >()
  /** The signed-in customer's own. */
  const mine = <A, E, R>(use: (userId: string) => Effect.Effect<A, E, R>) =>
    Effect.flatMap(CurrentSession, (session) => use(session.user.id))
  return handlers
    .handle("list", ({ query }) =>
      mine((userId) => listInvoices(userId, query.after, query.limit ?? 20)).pipe(
        Effect.map((page) => ({ invoices: page.invoices.map(invoiceView), ...present("next", page.next) })),
        Effect.provideContext(services),
        mapDomainErrors
      ))
    .handle("get", ({ params }) =>
      mine((userId) => ownedInvoice(userId, params.id)).pipe(Effect.map(invoiceView), Effect.provideContext(services), mapDomainErrors))
    .handle("pdf", ({ params }) =>
      mine((userId) => invoicePdf(userId, params.id)).pipe(Effect.map(({ pdf }) => pdf), Effect.provideContext(services), mapDomainErrors))
    .handle("xml", ({ params }) =>
      mine((userId) => invoiceXml(userId, params.id)).pipe(Effect.map(({ xml }) => xml), Effect.provideContext(services), mapDomainErrors))
}))
