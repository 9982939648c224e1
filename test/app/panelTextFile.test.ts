// The panel's editor opens a file only when its bytes come back unchanged through a textarea, and writes exactly the
// bytes edited: binary content, invalid UTF-8, mixed line endings and oversized files are refused; a BOM and CRLF
// line endings survive a save. (The browser test does the same through Chromium's textarea.)
import { describe, expect, it } from "vitest"
import { decodeTextFile, encodeTextFile, MAX_EDIT_BYTES, refusalFromListing } from "../../app/web/src/textFile.ts"

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))))

/** What a save of the untouched editor writes. */
const roundTrip = (input: Uint8Array) => {
  const file = decodeTextFile(input)
  if (typeof file === "string") throw new Error(`refused: ${file}`)
  return Buffer.from(encodeTextFile(file.text, file.lineEnding))
}

describe("the editor's text files", () => {
  it("give back their exact bytes: LF, CRLF, a BOM, accents and emoji, an empty file", () => {
    for (
      const input of [
        bytes("motd=Hello\nmax-players=12\n"),
        bytes("line one\r\nline two\r\n"),
        bytes([0xef, 0xbb, 0xbf], "with a BOM\n"),
        bytes("café — naïve 🎮\nno final newline"),
        bytes("")
      ]
    ) expect(roundTrip(input).equals(input), JSON.stringify(input.toString())).toBe(true)
  })

  it("show CRLF files with the textarea's LF and write CRLF back, also on new lines typed", () => {
    const file = decodeTextFile(bytes("a\r\nb\r\n"))
    expect(file).toEqual({ text: "a\nb\n", lineEnding: "\r\n" })
    expect(Buffer.from(encodeTextFile("a\nb\nc\n", "\r\n")).toString()).toBe("a\r\nb\r\nc\r\n")
  })

  it("write edited text as UTF-8", () => {
    expect([...encodeTextFile("é", "\n")]).toEqual([0xc3, 0xa9])
  })

  it("refuse binary content: a NUL byte, invalid UTF-8 (a JAR's bytes), a lone surrogate's encoding", () => {
    expect(decodeTextFile(bytes("text", [0], "more"))).toBe("binary")
    expect(decodeTextFile(bytes([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x08, 0x08]))).toBe("binary")
    expect(decodeTextFile(bytes("ok ", [0xff, 0xfe], " then"))).toBe("binary")
    expect(decodeTextFile(bytes([0xed, 0xa0, 0x80]))).toBe("binary")
    // Invalid only near the end: the whole file is checked, not its first bytes.
    expect(decodeTextFile(bytes("a".repeat(100_000), [0xc3]))).toBe("binary")
  })

  it("refuse mixed line endings and lone CRs, which a textarea would change", () => {
    expect(decodeTextFile(bytes("a\r\nb\nc"))).toBe("mixedLineEndings")
    expect(decodeTextFile(bytes("a\rb"))).toBe("mixedLineEndings")
  })

  it("refuse oversized files from the listing, before fetching, and binary types the listing names", () => {
    expect(refusalFromListing({ size: MAX_EDIT_BYTES + 1, mimetype: "text/plain" })).toBe("tooLarge")
    expect(refusalFromListing({ size: 300_000, mimetype: "application/java-archive" })).toBe("binary")
    expect(refusalFromListing({ size: 10, mimetype: "application/octet-stream" })).toBe("binary")
    expect(refusalFromListing({ size: 10, mimetype: "image/png" })).toBe("binary")
    expect(refusalFromListing({ size: MAX_EDIT_BYTES, mimetype: "text/plain; charset=utf-8" })).toBeNull()
    expect(refusalFromListing({ size: 0, mimetype: "inode/x-empty" })).toBeNull()
    expect(refusalFromListing({ size: 10, mimetype: "application/json" })).toBeNull()
    expect(decodeTextFile(new Uint8Array(MAX_EDIT_BYTES + 1).fill(0x61))).toBe("tooLarge")
  })
})
