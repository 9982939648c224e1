// InvoiceDocuments with @e-invoice-eu/core: the CII XML of the Factur-X EN 16931 profile, and the Factur-X PDF (our
// page turned into PDF/A-3 with that XML attached as factur-x.xml).
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from "@cantoo/pdf-lib"
import { InvoiceService } from "@e-invoice-eu/core"
import { Effect, Layer } from "effect"
import type { Invoice } from "../../domain/billing/invoicing/Invoice.ts"
import { InvoiceDocuments } from "../../ports/InvoiceDocuments.ts"
import { toEInvoice, withPrecedingInvoice } from "./en16931.ts"
import { renderInvoicePdf } from "./invoicePdf.ts"

/** The library reports through a logger; nothing it says is for the customer. */
const quiet = { log: () => {}, warn: () => {}, error: () => {} }

/**
 * The factur-x.xml the library embedded, replaced by `xml` (the same document, completed by withPrecedingInvoice):
 * its file specification keeps its relationship and MIME type; size and date follow the new content.
 */
const replaceFacturXml = async (pdf: Uint8Array, xml: string): Promise<Uint8Array> => {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false })
  const names = doc.catalog.lookup(PDFName.of("Names"), PDFDict).lookup(PDFName.of("EmbeddedFiles"), PDFDict)
  const list = names.lookup(PDFName.of("Names"), PDFArray)
  for (let i = 0; i < list.size(); i += 2) {
    const name = list.lookup(i)
    const text = name instanceof PDFString || name instanceof PDFHexString ? name.decodeText() : ""
    if (text !== "factur-x.xml") continue
    const spec = list.lookup(i + 1, PDFDict)
    const ef = spec.lookup(PDFName.of("EF"), PDFDict)
    const bytes = new TextEncoder().encode(xml)
    const stream = doc.context.flateStream(bytes, {
      Type: "EmbeddedFile",
      Subtype: "text/xml",
      Params: { Size: bytes.length, ModDate: PDFString.fromDate(new Date(0)) }
    })
    ef.set(PDFName.of("F"), doc.context.register(stream))
  }
  return doc.save({ updateFieldAppearances: false })
}

export const make = (): InvoiceDocuments["Service"] => {
  const service = new InvoiceService(quiet)
  const lang = (invoice: Invoice) => invoice.language === "fr" ? "fr-fr" : "en-gb"
  const cii = async (invoice: Invoice) => {
    const out = await service.generate(toEInvoice(invoice), { format: "CII", lang: lang(invoice) })
    return withPrecedingInvoice(typeof out === "string" ? out : new TextDecoder().decode(out), invoice)
  }
  const pdf = (invoice: Invoice) =>
    Effect.promise(async () => {
      const page = await renderInvoicePdf(invoice)
      const out = await service.generate(toEInvoice(invoice), {
        format: "Factur-X-EN16931",
        lang: lang(invoice),
        pdf: { buffer: page, filename: `${invoice.number}.pdf`, mimetype: "application/pdf" }
      })
      const facturX = typeof out === "string" ? new TextEncoder().encode(out) : out
      return invoice.correctsNumber === null ? facturX : replaceFacturXml(facturX, await cii(invoice))
    })
  return InvoiceDocuments.of({ xml: (invoice) => Effect.promise(() => cii(invoice)), pdf })
}

export const layer = Layer.sync(InvoiceDocuments, make)
