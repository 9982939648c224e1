// The human-readable page of an invoice or credit note, drawn with pdf-lib: every mention of reference/billing-fr.md §1
// in the customer's language. Factur-X then turns it into PDF/A-3 and attaches the XML (FacturXDocuments.ts).
import { PDFDocument, type PDFFont, type PDFPage, rgb } from "@cantoo/pdf-lib"
import fontkit from "@cantoo/fontkit"
import { readFileSync } from "node:fs"
import type { Invoice } from "../../domain/billing/invoicing/Invoice.ts"
import { decimal } from "./en16931.ts"
import { textsFor } from "./texts.ts"

const A4 = [595.28, 841.89] as const
const MARGIN = 48

/**
 * DejaVu Sans (adapters/documents/fonts, its licence beside it), embedded as a subset of the glyphs used: PDF/A wants
 * every font in the file, and it writes every customer's name and address as typed (any Latin, Greek or Cyrillic
 * letter). Read once, when the first document is drawn.
 */
let fonts: { readonly regular: Uint8Array; readonly bold: Uint8Array } | undefined
const fontFiles = () =>
  fonts ??= {
    regular: readFileSync(new URL("./fonts/DejaVuSans.ttf", import.meta.url)),
    bold: readFileSync(new URL("./fonts/DejaVuSans-Bold.ttf", import.meta.url))
  }

/** A control character (a tab, a line break a customer typed) draws nothing: a space. */
const printable = (text: string): string => text.replace(/[\u0000-\u001F\u007F-\u009F]/g, " ")

const euros = (cents: number, language: Invoice["language"]) =>
  language === "fr" ? `${decimal(cents).replace(".", ",")} €` : `€${decimal(cents)}`

const dateOf = (date: Date, language: Invoice["language"]) =>
  new Intl.DateTimeFormat(language === "fr" ? "fr-FR" : "en-GB", { timeZone: "Europe/Paris", dateStyle: "long" }).format(date)

class Writer {
  y = A4[1] - MARGIN
  readonly page: PDFPage
  readonly regular: PDFFont
  readonly bold: PDFFont
  constructor(page: PDFPage, regular: PDFFont, bold: PDFFont) {
    this.page = page
    this.regular = regular
    this.bold = bold
  }
  line(text: string, options: { readonly x?: number; readonly size?: number; readonly bold?: boolean; readonly keep?: boolean } = {}) {
    this.page.drawText(printable(text), {
      x: options.x ?? MARGIN,
      y: this.y,
      size: options.size ?? 9,
      font: options.bold ? this.bold : this.regular,
      color: rgb(0.1, 0.1, 0.1)
    })
    if (!options.keep) this.y -= (options.size ?? 9) + 4
  }
  gap(points = 8) {
    this.y -= points
  }
}

export const renderInvoicePdf = async (invoice: Invoice): Promise<Uint8Array> => {
  const t = textsFor(invoice.language)
  const lang = invoice.language
  const pdf = await PDFDocument.create()
  const title = `${invoice.kind === "invoice" ? t.invoice : t.creditNote} ${invoice.number}`
  pdf.setTitle(title)
  pdf.setAuthor(invoice.seller.companyName)
  pdf.setLanguage(lang === "fr" ? "fr-FR" : "en-GB")
  pdf.registerFontkit(fontkit)
  const { bold, regular } = fontFiles()
  const w = new Writer(pdf.addPage([...A4]), await pdf.embedFont(regular, { subset: true }), await pdf.embedFont(bold, { subset: true }))
  const { buyer, seller } = invoice

  w.line(title, { size: 18, bold: true })
  w.line(`${t.issued} : ${dateOf(invoice.issuedAt, lang)}`)
  if (invoice.periodStart !== null && invoice.periodEnd !== null) {
    w.line(`${t.period} : ${dateOf(invoice.periodStart, lang)} – ${dateOf(invoice.periodEnd, lang)}`)
  }
  if (invoice.correctsNumber !== null) w.line(`${t.corrects} ${invoice.correctsNumber}`, { bold: true })
  w.gap()

  const top = w.y
  w.line(t.seller, { bold: true })
  for (const text of [
    seller.companyName,
    `${seller.legalForm} ${t.capital} ${euros(seller.shareCapitalCents, lang)}`,
    seller.address.line1,
    ...(seller.address.line2 === null ? [] : [seller.address.line2]),
    `${seller.address.postcode} ${seller.address.city} ${seller.address.country}`,
    `SIREN ${seller.siren} – SIRET ${seller.siret}`,
    seller.rcs,
    `TVA ${seller.vatNumber}`
  ]) w.line(text)
  const afterSeller = w.y
  w.y = top
  const x = A4[0] / 2 + 10
  w.line(t.buyer, { x, bold: true })
  for (const text of [
    ...(buyer.companyName === null ? [buyer.name] : [buyer.companyName, buyer.name]),
    buyer.address.line1,
    ...(buyer.address.line2 === null ? [] : [buyer.address.line2]),
    `${buyer.address.postcode} ${buyer.address.city} ${buyer.address.country}`,
    ...(buyer.siren === null ? [] : [`SIREN ${buyer.siren}`]),
    ...(buyer.vatNumber === null ? [] : [`TVA ${buyer.vatNumber}`])
  ]) w.line(text, { x })
  w.y = Math.min(w.y, afterSeller)
  w.gap(12)

  const columns = [MARGIN, 320, 360, 460, 500] as const
  const row = (cells: ReadonlyArray<string>, bold = false) => {
    cells.forEach((cell, i) => w.line(cell, { x: columns[i]!, bold, keep: i < cells.length - 1 }))
  }
  row([t.description, t.quantity, t.unitPrice, t.vatRate, t.total], true)
  for (const line of invoice.lines) {
    row([
      line.description.slice(0, 60),
      String(line.quantity),
      euros(line.unitPriceExcludingVatCents, lang),
      `${line.vatCategory} ${line.vatRateBasisPoints / 100} %`,
      euros(line.totalExcludingVatCents, lang)
    ])
  }
  w.gap()
  w.line(`${t.totalExcludingVat} : ${euros(invoice.totalExcludingVatCents, lang)}`, { x: 360 })
  for (const group of invoice.vatBreakdown) {
    w.line(`${t.vat} ${group.vatCategory} ${group.vatRateBasisPoints / 100} % (${euros(group.baseCents, lang)}) : ${euros(group.vatCents, lang)}`, { x: 360 })
  }
  w.line(`${t.totalIncludingVat} : ${euros(invoice.totalIncludingVatCents, lang)}`, { x: 360, bold: true, size: 11 })
  w.gap(12)

  const paidOn = dateOf(invoice.settlement.at, lang)
  for (const text of [
    invoice.kind === "invoice" ? t.paidOn(paidOn) : t.refundedOn(paidOn),
    t.services,
    ...(seller.vatOnDebits ? [t.vatOnDebits] : []),
    ...(invoice.mentions.includes("reverse_charge") ? [t.reverseCharge] : []),
    ...(invoice.mentions.includes("outside_scope") ? [t.outsideScope] : []),
    t.lateFees(seller.latePaymentPenaltyRate),
    ...(buyer.business ? [t.recoveryIndemnity] : [])
  ]) w.line(text)
  return pdf.save()
}
