// The official EN 16931 schematron for CII (ConnectingEurope/eInvoicing-EN16931, see the fixture's README), compiled
// to a SEF once and run here with SaxonJS: what it says about one of our Factur-X XML documents.
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { gunzipSync } from "node:zlib"
import SaxonJS from "saxon-js"

const sefFile = resolve(import.meta.dirname, "../fixtures/en16931-cii-validation-1.3.16/EN16931-CII-validation.sef.json.gz")

let stylesheet: object | undefined
const compiled = (): object => stylesheet ??= JSON.parse(gunzipSync(readFileSync(sefFile)).toString("utf8")) as object

const svrl = { svrl: "http://purl.oclc.org/dsdl/svrl" }

/**
 * The rules `xml` breaks at `flag` ("fatal": an invalid EN 16931 invoice; "warning": advice), one line each:
 * `BR-O-02 at /CrossIndustryInvoice[1]/…: [BR-O-02]-An Invoice that…`.
 */
export const schematronFailures = async (xml: string, flag: "fatal" | "warning" = "fatal"): Promise<Array<string>> => {
  const report = await SaxonJS.transform({ stylesheetInternal: compiled(), sourceText: xml, destination: "document" }, "async")
  const failures = SaxonJS.XPath.evaluate(
    `//svrl:failed-assert[@flag = '${flag}'] ! (@id || ' at ' || @location || ': ' || normalize-space(svrl:text))`,
    report.principalResult,
    { namespaceContext: svrl, resultForm: "array" }
  )
  // The locations name every step by namespace; the prefix-free path is enough to find the element.
  return failures.map((failure) => failure.replace(/\*:|\[namespace-uri\(\)='[^']*'\]/g, ""))
}
