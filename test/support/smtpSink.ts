// A real SMTP server on a loopback port that keeps every message it receives, for tests of mail sent by SMTP.
import { SMTPServer } from "smtp-server"

export interface SmtpSink {
  readonly port: number
  /** The raw messages received so far, in order. */
  readonly received: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startSmtpSink = async (): Promise<SmtpSink> => {
  const received: Array<string> = []
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
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
  return { port, received, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) }
}

/** Undoes quoted-printable soft line breaks and escapes, as a mail client would. */
export const decodeQuotedPrintable = (body: string) =>
  body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
