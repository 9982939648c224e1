// Mailer over SMTP with nodemailer: one transport per layer, closed on release; failures become MailNotSent
// without the SMTP URL or its credentials.
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import nodemailer from "nodemailer"
import { Mailer, MailNotSent } from "../../ports/Mailer.ts"

export interface SmtpMailerConfig {
  /** e.g. `smtps://user:password@smtp.example.com:465`; query parameters may override the defaults below. */
  readonly url: Redacted.Redacted<string>
  readonly from: string
}

// nodemailer's defaults (2 min to connect, 10 min of socket silence) would let a dead server hold a request for minutes.
const SMTP_TIMEOUTS = {
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 10_000,
  dnsTimeout: 10_000
} as const

// A server that keeps the socket alive while never finishing would slip past the idle timeouts above. The send
// may still complete after this fires, so a caller that retries can, rarely, deliver twice.
const SEND_DEADLINE = "30 seconds"

// Only the error code and the SMTP status reach the detail: nodemailer messages and server responses may quote
// the command line (AUTH carries the credentials) or the connection target.
const SmtpFailure = Schema.Struct({
  code: Schema.optional(Schema.String),
  responseCode: Schema.optional(Schema.Number)
})
const decodeSmtpFailure = Schema.decodeUnknownOption(SmtpFailure)
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,31}$/

const describeFailure = (error: unknown): string => {
  const failure = Option.getOrUndefined(decodeSmtpFailure(error))
  const code = failure?.code !== undefined && ERROR_CODE.test(failure.code) ? failure.code : undefined
  const status = failure?.responseCode !== undefined && Number.isInteger(failure.responseCode)
      && failure.responseCode >= 200 && failure.responseCode < 600
    ? failure.responseCode
    : undefined
  const parts = [code, status === undefined ? undefined : `SMTP ${status}`].filter((part) => part !== undefined)
  return parts.length === 0 ? "SMTP send failed" : `SMTP send failed: ${parts.join(", ")}`
}

export const layer = (config: SmtpMailerConfig): Layer.Layer<Mailer> =>
  Layer.effect(
    Mailer,
    Effect.gen(function*() {
      const transport = yield* Effect.acquireRelease(
        Effect.try({
          try: () => nodemailer.createTransport({ url: Redacted.value(config.url), ...SMTP_TIMEOUTS }),
          catch: () => new MailNotSent({ detail: "the SMTP URL could not be read" })
        }).pipe(Effect.orDie),
        (transport) => Effect.sync(() => transport.close())
      )
      return Mailer.of({
        send: (message) =>
          Effect.tryPromise({
            try: () =>
              transport.sendMail({
                from: config.from,
                to: message.to,
                subject: message.subject,
                text: message.text,
                html: message.html,
                attachments: (message.attachments ?? []).map((file) => ({
                  filename: file.filename,
                  contentType: file.contentType,
                  content: Buffer.from(file.content)
                }))
              }),
            catch: (error) => new MailNotSent({ detail: describeFailure(error) })
          }).pipe(
            Effect.timeoutOrElse({
              duration: SEND_DEADLINE,
              orElse: () => Effect.fail(new MailNotSent({ detail: "SMTP send timed out" }))
            }),
            Effect.asVoid,
            Effect.withSpan("SmtpMailer.send")
          )
      })
    })
  )
