// What a PDF carries as embedded files (a Factur-X PDF's factur-x.xml), read with the PDF library the documents are
// made with.
import {
  decodePDFRawStream,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRawStream,
  PDFString
} from "@cantoo/pdf-lib"

/** The PDF, loaded, and its embedded files by name, as text. */
export const embeddedFiles = async (pdf: Uint8Array) => {
  const doc = await PDFDocument.load(pdf)
  const names = doc.catalog.lookup(PDFName.of("Names"), PDFDict).lookup(PDFName.of("EmbeddedFiles"), PDFDict)
  const list = names.lookup(PDFName.of("Names"), PDFArray)
  const files = new Map<string, string>()
  for (let i = 0; i < list.size(); i += 2) {
    const name = list.lookup(i)
    const spec = list.lookup(i + 1, PDFDict)
    const stream = spec.lookup(PDFName.of("EF"), PDFDict).lookup(PDFName.of("F"))
    if (!(stream instanceof PDFRawStream)) throw new Error("an embedded file that is not a stream")
    const text = new TextDecoder().decode(decodePDFRawStream(stream).decode())
    files.set(name instanceof PDFString || name instanceof PDFHexString ? name.decodeText() : String(name), text)
  }
  return { doc, files }
}
