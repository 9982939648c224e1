// The part of saxon-js@2's API the EN 16931 schematron test uses (the package ships no types); shapes follow the
// SaxonJS 2 documentation (https://www.saxonica.com/saxon-js/documentation2/, "SaxonJS.transform" and
// "SaxonJS.XPath.evaluate").
declare module "saxon-js" {
  /** A node of SaxonJS's DOM (a result document, here). */
  export interface XdmNode {
    readonly nodeType: number
  }

  export interface TransformOptions {
    /** A compiled stylesheet (SEF), parsed. */
    readonly stylesheetInternal: object
    /** Where relative URIs of the stylesheet (document()) resolve. */
    readonly stylesheetBaseURI: string
    readonly sourceText: string
    readonly destination: "document"
  }

  export interface TransformResult {
    readonly principalResult: XdmNode
  }

  export interface XPathOptions {
    readonly namespaceContext?: Record<string, string>
    readonly resultForm?: "array"
  }

  const SaxonJS: {
    transform(options: TransformOptions, execution: "async"): Promise<TransformResult>
    readonly XPath: {
      evaluate(expression: string, contextItem: XdmNode, options: XPathOptions & { readonly resultForm: "array" }): Array<string>
    }
  }
  export default SaxonJS
}
