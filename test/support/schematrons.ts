// The official schematrons our Factur-X XML must pass, each compiled once to a SEF (see its fixture's README) and run
// here with SaxonJS: the EN 16931 rules for CII (CEN, published by the European Commission) and the Factur-X 1.09
// EN 16931 profile's own rules (FNFE-MPE and FeRD: code lists, profile restrictions).
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { gunzipSync } from "node:zlib"
import SaxonJS from "saxon-js"

const fixtures = resolve(import.meta.dirname, "../fixtures")

const svrl = { svrl: "http://purl.oclc.org/dsdl/svrl" }

/** A line per broken rule: `BR-O-02 at /CrossIndustryInvoice[1]/…: [BR-O-02]-An Invoice that…`. */
export interface SchematronReport {
  /** The rules whose breach makes the document invalid: flag `fatal` in EN 16931, no flag in Factur-X. */
  readonly errors: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

/** A schematron run over one document; `sef` is the gzipped SEF, next to the code lists it reads (document()). */
const schematron = (sef: string) => {
  let stylesheet: object | undefined
  const compiled = (): object => stylesheet ??= JSON.parse(gunzipSync(readFileSync(sef)).toString("utf8")) as object
  return async (xml: string): Promise<SchematronReport> => {
    const report = await SaxonJS.transform({
      stylesheetInternal: compiled(),
      stylesheetBaseURI: pathToFileURL(sef).href,
      sourceText: xml,
      destination: "document"
    }, "async")
    // The locations name every step by its namespace; the prefix-free path is enough to find the element.
    const failures = (selection: string) =>
      SaxonJS.XPath.evaluate(
        `//svrl:failed-assert[${selection}] ! (@id || ' at ' || @location || ': ' || normalize-space(svrl:text))`,
        report.principalResult,
        { namespaceContext: svrl, resultForm: "array" }
      ).map((failure) => failure.replace(/\*:|\[namespace-uri\(\)='[^']*'\]/g, ""))
    return { errors: failures("not(@flag = 'warning')"), warnings: failures("@flag = 'warning'") }
  }
}

/** EN 16931 1.3.16 for CII (ConnectingEurope/eInvoicing-EN16931). */
export const en16931Failures = schematron(resolve(fixtures, "en16931-cii-validation-1.3.16/EN16931-CII-validation.sef.json.gz"))

/** Factur-X 1.09, EN 16931 profile (the schematron shipped with the XSD). */
export const facturXFailures = schematron(resolve(fixtures, "factur-x-1.09-en16931/Factur-X_1.09_EN16931.sef.json.gz"))
