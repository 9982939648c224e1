// Our invoice as @e-invoice-eu/core's EN 16931 input (UBL-shaped JSON, one key per business term), from which it
// writes the CII XML of Factur-X. Amounts leave integer cents only here, as decimal strings.
import type { Invoice } from "../../domain/billing/invoicing/Invoice.ts"
import type { Invoice as EInvoice } from "@e-invoice-eu/core"

/** 1234 cents → "12.34". */
export const decimal = (cents: number): string => {
  const sign = cents < 0 ? "-" : ""
  const abs = Math.abs(cents)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`
}

/** 2000 basis points → "20", 550 → "5.5". */
const percent = (basisPoints: number): string => String(basisPoints / 100)

const day = (date: Date): string => date.toISOString().slice(0, 10)

const amount = (cents: number) => ({ value: decimal(cents), currency: "EUR" })

const address = (a: Invoice["buyer"]["address"]) => ({
  "cbc:StreetName": a.line1,
  ...(a.line2 === null ? {} : { "cbc:AdditionalStreetName": a.line2 }),
  "cbc:CityName": a.city,
  "cbc:PostalZone": a.postcode,
  "cac:Country": { "cbc:IdentificationCode": a.country }
})

/** BT-120, the text of an exemption, by VATEX code. */
const EXEMPTION_TEXT: Record<string, string> = {
  "VATEX-EU-AE": "Autoliquidation",
  "VATEX-EU-O": "Hors champ d'application de la TVA française"
}

/** An invoice out of the scope of VAT (category O) states no rate (EN 16931 BR-O-05 for a line; its VAT breakdown likewise). */
const taxCategory = (category: string, basisPoints: number, exemptionCode: string | null) => ({
  "cbc:ID": category,
  ...(category === "O" ? {} : { "cbc:Percent": percent(basisPoints) }),
  ...(exemptionCode === null || category === "S"
    ? {}
    : { "cbc:TaxExemptionReasonCode": exemptionCode, "cbc:TaxExemptionReason": EXEMPTION_TEXT[exemptionCode] ?? exemptionCode }),
  "cac:TaxScheme": { "cbc:ID": "VAT" }
})

/**
 * BT-30 (SIREN, scheme 0002) identifies the seller and a French business buyer (BT-47); BT-31 and BT-48 are the VAT
 * numbers. Credit notes (type 381) keep positive amounts and refer to the invoice they correct (BT-25).
 */
export const toEInvoice = (invoice: Invoice): EInvoice => {
  const { buyer, seller } = invoice
  const outOfScope = invoice.lines.some((line) => line.vatCategory === "O")
  const withAmount = (key: string, cents: number) => ({ [key]: amount(cents).value, [`${key}@currencyID`]: "EUR" })
  const document = {
    "cbc:CustomizationID": "urn:cen.eu:en16931:2017",
    "cbc:ID": invoice.number,
    "cbc:IssueDate": day(invoice.issuedAt),
    "cbc:InvoiceTypeCode": invoice.kind === "invoice" ? "380" : "381",
    // BG-1: the mentions French law adds (reference/billing-fr.md §1), as one note: the library writes an array as
    // several contents of one note, which the schema refuses.
    "cbc:Note": [[
      `${seller.companyName}, ${seller.legalForm} au capital de ${decimal(seller.shareCapitalCents)} EUR, ${seller.rcs}, SIRET ${seller.siret}`,
      "Prestations de services",
      ...(seller.vatOnDebits ? ["Option pour le paiement de la taxe d'après les débits"] : []),
      `Pénalités de retard : ${seller.latePaymentPenaltyRate}`,
      ...(buyer.business ? ["Indemnité forfaitaire pour frais de recouvrement : 40 EUR"] : []),
      ...(invoice.mentions.includes("reverse_charge") ? ["Autoliquidation"] : [])
    ].join("\n")],
    "cbc:DocumentCurrencyCode": "EUR",
    ...(invoice.periodStart === null || invoice.periodEnd === null
      ? {}
      : { "cac:InvoicePeriod": { "cbc:StartDate": day(invoice.periodStart), "cbc:EndDate": day(invoice.periodEnd) } }),
    ...(invoice.correctsNumber === null
      ? {}
      : { "cac:BillingReference": [{ "cac:InvoiceDocumentReference": { "cbc:ID": invoice.correctsNumber } }] }),
    "cac:AccountingSupplierParty": {
      "cac:Party": {
        "cbc:EndpointID": seller.email,
        "cbc:EndpointID@schemeID": "EM",
        "cac:PartyName": { "cbc:Name": seller.companyName },
        "cac:PostalAddress": address(seller.address),
        // BT-31, the VAT number; an invoice out of the scope of VAT may not state one (BR-O-02), so there the same
        // number, which French law still asks for, is the seller's tax registration (BT-32, scheme FC).
        "cac:PartyTaxScheme": [{ "cbc:CompanyID": seller.vatNumber, "cac:TaxScheme": { "cbc:ID": outOfScope ? "FC" : "VAT" } }],
        "cac:PartyLegalEntity": {
          "cbc:RegistrationName": seller.companyName,
          "cbc:CompanyID": seller.siren,
          "cbc:CompanyID@schemeID": "0002",
          "cbc:CompanyLegalForm": `${seller.legalForm} au capital de ${decimal(seller.shareCapitalCents)} €, ${seller.rcs}`
        }
      }
    },
    "cac:AccountingCustomerParty": {
      "cac:Party": {
        "cbc:EndpointID": buyer.email,
        "cbc:EndpointID@schemeID": "EM",
        "cac:PostalAddress": address(buyer.address),
        ...(buyer.vatNumber === null
          ? {}
          : { "cac:PartyTaxScheme": { "cbc:CompanyID": buyer.vatNumber, "cac:TaxScheme": { "cbc:ID": "VAT" } } }),
        "cac:PartyLegalEntity": {
          "cbc:RegistrationName": buyer.companyName ?? buyer.name,
          ...(buyer.siren === null ? {} : { "cbc:CompanyID": buyer.siren, "cbc:CompanyID@schemeID": "0002" })
        }
      }
    },
    // BT-72: the service starts with the period paid for (Factur-X requires the delivery group, even this small).
    "cac:Delivery": { "cbc:ActualDeliveryDate": day(invoice.periodStart ?? invoice.issuedAt) },
    // Paid by card when issued (BT-81 code 48: bank card); a credit note's money went back the same way.
    "cac:PaymentMeans": [{ "cbc:PaymentMeansCode": "48", "cbc:PaymentMeansCode@name": "Carte bancaire" }],
    "cac:TaxTotal": [{
      ...withAmount("cbc:TaxAmount", invoice.vatCents),
      "cac:TaxSubtotal": invoice.vatBreakdown.map((group) => ({
        ...withAmount("cbc:TaxableAmount", group.baseCents),
        ...withAmount("cbc:TaxAmount", group.vatCents),
        "cac:TaxCategory": taxCategory(group.vatCategory, group.vatRateBasisPoints, invoice.exemptionCode)
      }))
    }],
    "cac:LegalMonetaryTotal": {
      ...withAmount("cbc:LineExtensionAmount", invoice.totalExcludingVatCents),
      ...withAmount("cbc:TaxExclusiveAmount", invoice.totalExcludingVatCents),
      ...withAmount("cbc:TaxInclusiveAmount", invoice.totalIncludingVatCents),
      // Already paid: nothing is due.
      ...withAmount("cbc:PrepaidAmount", invoice.totalIncludingVatCents),
      ...withAmount("cbc:PayableAmount", 0)
    },
    "cac:InvoiceLine": invoice.lines.map((line, i) => ({
      "cbc:ID": String(i + 1),
      "cbc:InvoicedQuantity": String(line.quantity),
      "cbc:InvoicedQuantity@unitCode": "C62",
      ...withAmount("cbc:LineExtensionAmount", line.totalExcludingVatCents),
      "cac:Item": {
        "cbc:Name": line.description,
        "cac:ClassifiedTaxCategory": taxCategory(line.vatCategory, line.vatRateBasisPoints, null)
      },
      "cac:Price": withAmount("cbc:PriceAmount", line.unitPriceExcludingVatCents)
    }))
  }
  return { "ubl:Invoice": document } as unknown as EInvoice
}

/**
 * BT-25 in the CII: @e-invoice-eu/core 2.3.4 validates `cac:BillingReference` as EN 16931 shapes it but maps the
 * preceding invoice's number from a path its own schema refuses, so a credit note's XML comes out without it. It is
 * put where the schema orders it: the last element of the header settlement before its accounting account (none here).
 */
export const withPrecedingInvoice = (xml: string, invoice: Invoice): string => {
  if (invoice.correctsNumber === null || xml.includes("<ram:InvoiceReferencedDocument>")) return xml
  const escaped = invoice.correctsNumber.replace(/[<>&]/g, "")
  const reference = `<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>${escaped}</ram:IssuerAssignedID></ram:InvoiceReferencedDocument>`
  const end = "</ram:SpecifiedTradeSettlementHeaderMonetarySummation>"
  const at = xml.lastIndexOf(end)
  if (at < 0) throw new Error("CII without a monetary summation")
  return `${xml.slice(0, at + end.length)}${reference}${xml.slice(at + end.length)}`
}
