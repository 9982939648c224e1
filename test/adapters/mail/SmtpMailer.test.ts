// Specification of the SMTP Mailer against a real in-process SMTP server (smtp-server on an ephemeral port).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import { layer } from "../../../adapters/mail/SmtpMailer.ts"
import { type MailMessage, Mailer } from "../../../ports/Mailer.ts"

interface Received {
  readonly mailFrom: string | undefined
  readonly rcptTo: ReadonlyArray<string>
  readonly raw: string
}

/** A plaintext SMTP server on 127.0.0.1, closed with the test's scope; `received` fills as messages arrive. */
const smtpServer = (options: SMTPServerOptions) =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    const server = new SMTPServer({
      logger: false,
      disabledCommands: ["STARTTLS"],
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          received.push({
            mailFrom: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            raw: Buffer.concat(chunks).toString("utf8")
          })
          callback()
        })
      },
      ...options
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        const listener = server.listen(0, "127.0.0.1", () => {
          const address = listener.address()
          resume(
            typeof address === "object" && address !== null
              ? Effect.succeed(address.port)
              : Effect.die(new Error("the SMTP test server has no TCP address"))
          )
        })
      }),
      () => Effect.callback<void>((resume) => server.close(() => resume(Effect.void)))
    )
    return { port, received }
  })

const message: MailMessage = {
  to: "ann@example.test",
  subject: "Your server is ready",
  text: "Hello Ann, your server vps-1 is ready.",
  html: "<p>Hello Ann, your server <b>vps-1</b> is ready.</p>"
}
const from = "ZH Hosting <noreply@zh.example.test>"

const send = (url: string, mail: MailMessage = message) =>
  Effect.gen(function*() {
    const mailer = yield* Mailer
    return yield* mailer.send(mail)
  }).pipe(Effect.provide(layer({ url: Redacted.make(url), from })))

// Just enough RFC 5322/2045 to check what arrived: unfolded headers, multipart split, quoted-printable.
interface Part {
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}
const parsePart = (raw: string): Part => {
  const split = raw.indexOf("\r\n\r\n")
  const head = split === -1 ? raw : raw.slice(0, split)
  const body = split === -1 ? "" : raw.slice(split + 4)
  const headers = new Map<string, string>()
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":")
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body }
}
const decodeBody = (part: Part): string =>
  part.headers.get("content-transfer-encoding")?.toLowerCase() === "quoted-printable"
    ? part.body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : part.body
const alternatives = (mail: Part): Array<Part> => {
  const boundary = /boundary="?([^";]+)"?/.exec(mail.headers.get("content-type") ?? "")?.[1]
  if (boundary === undefined) return []
  return mail.body.split(`--${boundary}`).slice(1, -1).map((chunk) => parsePart(chunk.replace(/^\r\n/, "")))
}

describe("SmtpMailer", () => {
  it.live("delivers From, To, Subject and both a text and an HTML alternative", () =>
    Effect.gen(function*() {
      const server = yield* smtpServer({ authOptional: true })
      yield* send(`smtp://127.0.0.1:${server.port}`)

      assert.strictEqual(server.received.length, 1)
      const [delivered] = server.received
      assert.isDefined(delivered)
      if (delivered === undefined) return
      assert.strictEqual(delivered.mailFrom, "noreply@zh.example.test")
      assert.deepStrictEqual(delivered.rcptTo, ["ann@example.test"])

      const mail = parsePart(delivered.raw)
      assert.strictEqual(mail.headers.get("from"), from)
      assert.strictEqual(mail.headers.get("to"), message.to)
      assert.strictEqual(mail.headers.get("subject"), message.subject)
      assert.match(mail.headers.get("content-type") ?? "", /^multipart\/alternative;/)

      const parts = alternatives(mail)
      const text = parts.find((part) => part.headers.get("content-type")?.startsWith("text/plain"))
      const html = parts.find((part) => part.headers.get("content-type")?.startsWith("text/html"))
      assert.isDefined(text)
      assert.isDefined(html)
      if (text === undefined || html === undefined) return
      assert.strictEqual(decodeBody(text).trim(), message.text)
      assert.strictEqual(decodeBody(html).trim(), message.html)
    }))

  it.live("a recipient the server refuses is MailNotSent, with the SMTP status and without the URL", () =>
    Effect.gen(function*() {
      const server = yield* smtpServer({
        authOptional: true,
        onRcptTo(_address, _session, callback) {
          callback(Object.assign(new Error("Mailbox unavailable"), { responseCode: 550 }))
        }
      })
      const url = `smtp://127.0.0.1:${server.port}`
      const error = yield* Effect.flip(send(url))

      assert.strictEqual(error._tag, "MailNotSent")
      assert.include(error.detail, "550")
      assert.notInclude(error.detail, url)
      assert.notInclude(error.detail, "127.0.0.1")
      assert.lengthOf(server.received, 0)
    }))

  it.live("rejected credentials are MailNotSent without the user name or password", () =>
    Effect.gen(function*() {
      const server = yield* smtpServer({
        allowInsecureAuth: true,
        authMethods: ["PLAIN", "LOGIN"],
        onAuth(_auth, _session, callback) {
          callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }))
        }
      })
      const url = `smtp://mailer-user:s3cret-Passw0rd@127.0.0.1:${server.port}`
      const error = yield* Effect.flip(send(url))

      assert.strictEqual(error._tag, "MailNotSent")
      assert.include(error.detail, "EAUTH")
      for (const leaked of ["s3cret-Passw0rd", "mailer-user", url, Buffer.from("s3cret-Passw0rd").toString("base64")]) {
        assert.notInclude(error.detail, leaked)
        assert.notInclude(JSON.stringify(error), leaked)
      }
      assert.lengthOf(server.received, 0)
    }))

  it.live("a server that is not there is MailNotSent, promptly", () =>
    Effect.gen(function*() {
      const { port } = yield* Effect.scoped(smtpServer({ authOptional: true }))
      const url = `smtp://127.0.0.1:${port}`
      const error = yield* Effect.flip(send(url))
      assert.strictEqual(error._tag, "MailNotSent")
      assert.notInclude(error.detail, url)
    }))
})
