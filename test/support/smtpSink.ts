// A real SMTP server on a loopback port that keeps every message it receives, for tests of mail sent by SMTP.
import { SMTPServer } from "smtp-server"

export interface SmtpSink {
  readonly port: number
  /** The raw messages received so far, in order. */
  readonly received: ReadonlyArray<string>
  /** Messages answered "451 try again later" (while `refusing`), counted. */
  readonly refused: number
  /** While true, every message is refused with a temporary failure, as a mail server in trouble does. */
  refusing: boolean
  readonly close: () => Promise<void>
}

export const startSmtpSink = async (): Promise<SmtpSink> => {
  const received: Array<string> = []
  const state = { refused: 0, refusing: false }
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
        if (state.refusing) {
          state.refused++
          return callback(Object.assign(new Error("Try again later"), { responseCode: 451 }))
        }
        received.push(Buffer.concat(chunks).toString("utf8"))
        callback()
      })
    }
  })
  const port = await new Promise<number>((resolve) => {
    smtp.listen(0, "127.0.0.1", () => {
      const address = smtp.server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })
  return {
    port,
    received,
    get refused() {
      return state.refused
    },
    get refusing() {
      return state.refusing
    },
    set refusing(value: boolean) {
      state.refusing = value
    },
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve()))
  }
}

/** Undoes quoted-printable soft line breaks and escapes, as a mail client would. */
export const decodeQuotedPrintable = (body: string) =>
  body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

/** A header of a raw message, unfolded, its RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) decoded. */
export const headerOf = (raw: string, name: string): string | undefined => {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).replace(/\r\n[ \t]+/g, " ")
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
  if (line === undefined) return undefined
  const value = line.slice(name.length + 1).trim()
  return value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*(?==\?)|=\?utf-8\?([QB])\?([^?]*)\?=/gi, (...m: Array<string>) => {
    const encoding = (m[1] ?? m[3])!.toUpperCase()
    const text = (m[2] ?? m[4])!
    const bytes = encoding === "B"
      ? Buffer.from(text, "base64")
      : Buffer.from(
        text.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        "latin1"
      )
    return bytes.toString("utf8")
  })
}

/** A file attached to a raw message. */
export interface MailFile {
  readonly filename: string
  readonly contentType: string
  readonly content: Buffer
}

/** The attachments of a raw multipart message (its top-level `Content-Disposition: attachment` parts, base64). */
export const attachmentsOf = (raw: string): ReadonlyArray<MailFile> => {
  const files: Array<MailFile> = []
  const boundary = /boundary="?([^";]+)"?/i.exec(headerOf(raw, "Content-Type") ?? "")?.[1]
  if (boundary !== undefined) {
    for (const part of raw.split(`--${boundary}`)) {
      const cut = part.indexOf("\r\n\r\n")
      if (cut < 0) continue
      const head = part.slice(0, cut).replace(/\r\n[ \t]+/g, " ")
      const header = (name: string) =>
        head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim()
      const disposition = header("content-disposition")
      if (disposition === undefined || !/^attachment/i.test(disposition)) continue
      files.push({
        filename: /filename="?([^";]+)"?/i.exec(disposition)?.[1] ?? "",
        contentType: (header("content-type") ?? "").split(";")[0]!.trim(),
        content: Buffer.from(part.slice(cut + 4).replace(/\s+/g, ""), "base64")
      })
    }
  }
  return files
}
