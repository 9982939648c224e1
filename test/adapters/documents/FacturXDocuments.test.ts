// Specification of the invoice documents: the CII XML is valid against the official Factur-X 1.09 EN 16931 schema for
// every kind of document we issue and breaks no rule of the official schematrons (EN 16931, Factur-X), and the PDF is a Factur-X PDF/A-3 that carries that same XML as factur-x.xml.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { validateXML } from "xmllint-wasm"
import * as FacturXDocuments from "../../../adapters/documents/FacturXDocuments.ts"
import { Invoice, InvoiceId } from "../../../domain/billing/invoicing/Invoice.ts"
import { en16931Failures, facturXFailures } from "../../support/schematrons.ts"
import { invoiceDraft } from "../../support/invoiceMother.ts"
import { embeddedFiles } from "../../support/pdfFiles.ts"
import { PDFDict, PDFDocument, PDFName } from "@cantoo/pdf-lib"

const xsdDir = resolve(import.meta.dirname, "../../fixtures/factur-x-1.09-en16931")
const schemaFiles = readdirSync(xsdDir).filter((f) => f.endsWith(".xsd")).map((fileName) => ({
  fileName,
  contents: readFileSync(join(xsdDir, fileName), "utf8")
}))

/** Validation against Factur-X_EN16931.xsd (its imports preloaded): the errors, none when valid. */
const xsdErrors = async (xml: string) => {
  const result = await validateXML({
    xml: [{ fileName: "invoice.xml", contents: xml }],
    schema: schemaFiles.find((f) => f.fileName === "Factur-X_EN16931.xsd")!,
    preload: schemaFiles.filter((f) => f.fileName !== "Factur-X_EN16931.xsd")
  })
  return result.errors.map((e) => e.rawMessage)
}

const documents = FacturXDocuments.make()

const issued = (overrides: Partial<Invoice> = {}) =>
  new Invoice({ ...invoiceDraft("00000000-0000-4000-8000-000000000001"), number: "F2026-000042", ...overrides })

const belgianCompany = issued({
  lines: [{ description: "VPS S", quantity: 1, unitPriceExcludingVatCents: 1000, vatCategory: "AE", vatRateBasisPoints: 0, totalExcludingVatCents: 1000 }],
  vatBreakdown: [{ vatCategory: "AE", vatRateBasisPoints: 0, baseCents: 1000, vatCents: 0 }],
  vatCents: 0,
  totalIncludingVatCents: 1000,
  mentions: ["reverse_charge"],
  exemptionCode: "VATEX-EU-AE",
  taxCountry: null,
  buyer: {
    name: "Jan Peeters",
    companyName: "Demo SRL",
    address: { line1: "Rue de la Loi 1", line2: "Boîte 3", postcode: "1000", city: "Bruxelles", country: "BE" },
    vatNumber: "BE0123456749",
    siren: null,
    business: true,
    email: "jan@example.com"
  }
})

const swiss = issued({
  lines: [{ description: "Minecraft 2 GB", quantity: 2, unitPriceExcludingVatCents: 600, vatCategory: "O", vatRateBasisPoints: 0, totalExcludingVatCents: 1200 }],
  vatBreakdown: [{ vatCategory: "O", vatRateBasisPoints: 0, baseCents: 1200, vatCents: 0 }],
  totalExcludingVatCents: 1200,
  vatCents: 0,
  totalIncludingVatCents: 1200,
  mentions: ["outside_scope"],
  exemptionCode: "VATEX-EU-O",
  taxCountry: null,
  language: "en",
  buyer: { ...belgianCompany.buyer, companyName: null, vatNumber: null, business: false, address: { ...belgianCompany.buyer.address, country: "CH" } }
})

const frenchCompany = issued({
  buyer: { ...belgianCompany.buyer, companyName: "ELECTRICITE DE FRANCE", vatNumber: "FR03552081317", siren: "552081317", address: { line1: "22-30 avenue de Wagram", line2: null, postcode: "75008", city: "Paris", country: "FR" } }
})

// Above the OSS threshold, VAT of the consumer's member state.
const germanConsumer = issued({
  lines: [{ description: "VPS S", quantity: 1, unitPriceExcludingVatCents: 1000, vatCategory: "S", vatRateBasisPoints: 1900, totalExcludingVatCents: 1000 }],
  vatBreakdown: [{ vatCategory: "S", vatRateBasisPoints: 1900, baseCents: 1000, vatCents: 190 }],
  vatCents: 190,
  totalIncludingVatCents: 1190,
  taxCountry: "DE",
  countsTowardsOss: true,
  language: "en",
  buyer: { ...issued().buyer, address: { line1: "Unter den Linden 1", line2: null, postcode: "10117", city: "Berlin", country: "DE" } }
})

const creditNote = issued({
  id: InvoiceId.make("00000000-0000-4000-8000-0000000000c1"),
  kind: "credit_note",
  number: "A2026-000007",
  correctsInvoiceId: InvoiceId.make("00000000-0000-4000-8000-0000000000f1"),
  correctsNumber: "F2026-000042",
  ledgerKind: "refund"
})

const cases = [
  ["a French consumer's invoice (S 20 %)", issued()],
  ["a Belgian company's reverse-charge invoice (AE, both VAT numbers)", belgianCompany],
  ["a Swiss customer's out-of-scope invoice (O), in English, two units", swiss],
  ["a French company's invoice with its SIREN", frenchCompany],
  ["a German consumer's invoice at the German rate (S 19 %, OSS)", germanConsumer],
  ["a credit note naming the invoice it corrects", creditNote]
] as const

/** The embedded files of a PDF by name, read through the catalog's /Names /EmbeddedFiles tree. */
describe("Factur-X documents", () => {
  for (const [name, invoice] of cases) {
    it(`the XML of ${name} is valid against the Factur-X 1.09 EN 16931 schema`, async () => {
      const xml = await Effect.runPromise(documents.xml(invoice))
      assert.deepStrictEqual(await xsdErrors(xml), [])
      assert.include(xml, `<ram:ID>${invoice.number}</ram:ID>`)
      assert.include(xml, "<ram:ID>urn:cen.eu:en16931:2017</ram:ID>")
      assert.include(xml, `<ram:TypeCode>${invoice.kind === "invoice" ? "380" : "381"}</ram:TypeCode>`)
      assert.include(xml, `<ram:GrandTotalAmount>${(invoice.totalIncludingVatCents / 100).toFixed(2)}</ram:GrandTotalAmount>`)
    })
  }

  for (const [name, invoice] of cases) {
    it(`the XML of ${name} breaks no rule of the EN 16931 and Factur-X schematrons, not even a warning`, async () => {
      const xml = await Effect.runPromise(documents.xml(invoice))
      // Neither an error nor a warning.
      assert.deepStrictEqual(await en16931Failures(xml), { errors: [], warnings: [] })
      assert.deepStrictEqual(await facturXFailures(xml), { errors: [], warnings: [] })
    })
  }

  it("the schematrons report what they find: an out-of-scope invoice stating the seller's VAT number, a superfluous code list id (a warning), a country code that does not exist", async () => {
    const xml = await Effect.runPromise(documents.xml(swiss))
    // Out of scope, the seller's number is its tax registration (BT-32, FC), never its VAT identifier (BT-31, VA).
    assert.include(xml, '<ram:ID schemeID="FC">FR12000000097</ram:ID>')
    assert.notInclude(xml, "<ram:RateApplicablePercent>")
    const { errors } = await en16931Failures(xml.replace('schemeID="FC"', 'schemeID="VA"'))
    assert.strictEqual(errors.length, 1)
    assert.match(errors[0]!, /^BR-O-02 at \/CrossIndustryInvoice\[1\]\/SupplyChainTradeTransaction\[1\]\/.*: \[BR-O-02\]-An Invoice that contains/)
    const listed = await en16931Failures(xml.replace("<ram:CategoryCode>O</ram:CategoryCode>", '<ram:CategoryCode listID="UNCL5305">O</ram:CategoryCode>'))
    assert.deepStrictEqual(listed, {
      errors: [],
      warnings: [
        "CII-DT-045 at /CrossIndustryInvoice[1]/SupplyChainTradeTransaction[1]/IncludedSupplyChainTradeLineItem[1]/SpecifiedLineTradeSettlement[1]/ApplicableTradeTax[1]/CategoryCode[1]: [CII-DT-045] - @listID should not be present"
      ]
    })
    const nowhere = xml.replace("<ram:CountryID>CH</ram:CountryID>", "<ram:CountryID>XX</ram:CountryID>")
    assert.deepStrictEqual((await facturXFailures(nowhere)).errors, [
      "FX-SCH-A-000036 at /CrossIndustryInvoice[1]/SupplyChainTradeTransaction[1]/ApplicableHeaderTradeAgreement[1]/BuyerTradeParty[1]/PostalTradeAddress[1]/CountryID[1]: Value of 'ram:CountryID' is not allowed."
    ])
  })

  it("the XML says what the law asks: reverse charge with its exemption and both VAT numbers; the buyer's SIREN; the corrected invoice", async () => {
    const reverse = await Effect.runPromise(documents.xml(belgianCompany))
    assert.include(reverse, "<ram:CategoryCode>AE</ram:CategoryCode>")
    assert.include(reverse, "<ram:ExemptionReasonCode>VATEX-EU-AE</ram:ExemptionReasonCode>")
    assert.include(reverse, "<ram:ExemptionReason>Autoliquidation</ram:ExemptionReason>")
    assert.include(reverse, '<ram:ID schemeID="VA">BE0123456749</ram:ID>')
    assert.include(reverse, '<ram:ID schemeID="VA">FR12000000097</ram:ID>')
    const company = await Effect.runPromise(documents.xml(frenchCompany))
    assert.include(company, '<ram:ID schemeID="0002">552081317</ram:ID>')
    const credit = await Effect.runPromise(documents.xml(creditNote))
    assert.match(credit, /<ram:InvoiceReferencedDocument>\s*<ram:IssuerAssignedID>F2026-000042<\/ram:IssuerAssignedID>/)
  })

  it("the PDF is a Factur-X PDF/A-3 (EN 16931) carrying the same, valid XML as factur-x.xml", async () => {
    for (const invoice of [issued(), creditNote]) {
      const pdf = await Effect.runPromise(documents.pdf(invoice))
      assert.strictEqual(new TextDecoder().decode(pdf.slice(0, 5)), "%PDF-")
      const { doc, files } = await embeddedFiles(pdf)
      assert.strictEqual(doc.getPageCount(), 1)
      const attached = files.get("factur-x.xml")
      assert.isDefined(attached)
      assert.deepStrictEqual(await xsdErrors(attached!), [])
      assert.include(attached!, `<ram:ID>${invoice.number}</ram:ID>`)
      if (invoice.correctsNumber !== null) assert.include(attached!, `<ram:IssuerAssignedID>${invoice.correctsNumber}</ram:IssuerAssignedID>`)
      const text = new TextDecoder("latin1").decode(pdf)
      assert.include(text, "<pdfaid:part>3</pdfaid:part>")
      assert.include(text, "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>")
    }
  })

  it("the PDF embeds every font it uses (PDF/A), so a name in any Latin, Greek or Cyrillic script is printed as typed", async () => {
    const buyer = { ...issued().buyer, name: "Łukasz Ørsted-Ωμέγα Жуков", address: { ...issued().buyer.address, city: "Kraków" } }
    const pdf = await Effect.runPromise(documents.pdf(issued({ buyer })))
    const doc = await PDFDocument.load(pdf)
    const fonts = doc.context.enumerateIndirectObjects().map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.get(PDFName.of("Type")) === PDFName.of("Font"))
    const names = fonts.map((font) => String(font.get(PDFName.of("BaseFont"))))
    assert.isAbove(names.length, 0)
    // No standard font left unembedded: every font program is in the file (a TrueType subset of DejaVu Sans).
    for (const name of names) assert.match(name, /^\/(?:[A-Z]{6}\+)?DejaVuSans/)
    const descriptors = doc.context.enumerateIndirectObjects().map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.get(PDFName.of("Type")) === PDFName.of("FontDescriptor"))
    assert.isAbove(descriptors.length, 0)
    for (const descriptor of descriptors) assert.isDefined(descriptor.get(PDFName.of("FontFile2")))
  })
})
