// Which files the editor may open, and their exact bytes back: a file is edited only when its bytes are UTF-8 text the
// textarea can hold unchanged (no NUL, valid UTF-8, one line-ending style), so saving an untouched file writes the
// same bytes, and an edited one exactly what was typed. Anything else is offered as a download instead.

/** The panel's own limit for `files/contents` (Pterodactyl's PTERODACTYL_FILES_MAX_EDIT_SIZE, 4 MiB). */
export const MAX_EDIT_BYTES = 4 * 1024 * 1024

/** Why a file is not opened in the editor. */
export type Refusal = "binary" | "tooLarge" | "mixedLineEndings"

/** Types the panel's listing reports for content no editor should open (Wings detects them from the bytes). */
const BINARY_TYPE =
  /^(image|audio|video|font)\/|^application\/(octet-stream|zip|gzip|x-gzip|x-tar|java-archive|jar|x-7z-compressed|x-rar|x-bzip2|x-xz|pdf|wasm|x-executable|x-sharedlib|x-mach-binary|vnd\.microsoft\.portable-executable)\b/i

/** From the listing alone, before fetching anything: too large, or a type that is not text. */
export const refusalFromListing = (file: { readonly size: number; readonly mimetype: string }): Refusal | null =>
  file.size > MAX_EDIT_BYTES ? "tooLarge" : BINARY_TYPE.test(file.mimetype) ? "binary" : null

export interface TextFile {
  /** As the textarea holds it: lines end with `\n`. */
  readonly text: string
  /** What the file's lines end with, restored on save. */
  readonly lineEnding: "\n" | "\r\n"
}

// Fatal: an invalid sequence refuses the file instead of becoming U+FFFD. ignoreBOM: a byte-order mark stays in the
// text (as U+FEFF), so it is written back.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const encoder = new TextEncoder()

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0

/** The file as editable text, or why it cannot be: a NUL byte or invalid UTF-8 is binary. */
export const decodeTextFile = (bytes: Uint8Array): TextFile | Refusal => {
  if (bytes.byteLength > MAX_EDIT_BYTES) return "tooLarge"
  if (bytes.includes(0)) return "binary"
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return "binary"
  }
  const crlf = count(text, /\r\n/g)
  const cr = count(text, /\r/g)
  if (cr === 0) return { text, lineEnding: "\n" }
  // A textarea turns every CR and CRLF into LF: only a file that uses CRLF throughout can be given back as it was.
  if (cr === crlf && count(text, /\n/g) === crlf) return { text: text.replace(/\r\n/g, "\n"), lineEnding: "\r\n" }
  return "mixedLineEndings"
}

/** The bytes to write for the editor's text: UTF-8, with the file's own line endings. */
export const encodeTextFile = (text: string, lineEnding: TextFile["lineEnding"]): Uint8Array<ArrayBuffer> =>
  encoder.encode(lineEnding === "\r\n" ? text.replace(/\r?\n/g, "\r\n") : text)
