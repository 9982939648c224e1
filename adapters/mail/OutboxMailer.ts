// The sandbox Mailer used when no SMTP server is configured: logs each message and keeps the latest ones.
import { Clock, Effect, Layer } from "effect"
import { Mailer, MailNotSent } from "../../ports/Mailer.ts"
import { Outbox } from "../../ports/Outbox.ts"

export interface OutboxMailerOptions {
  /** How many messages the outbox keeps. */
  readonly keep: number
  /**
   * Whether the log line carries the message body. Development shows it (the reset link is the point of
   * the sandbox); production logs only recipient and subject, since bodies carry single-use tokens.
   */
  readonly logBodies: boolean
}

export const layer = (options: OutboxMailerOptions) =>
  Layer.effect(
    Mailer,
    Effect.gen(function*() {
      const outbox = yield* Outbox
      return Mailer.of({
        send: (message) =>
          Effect.gen(function*() {
            yield* outbox.append(message, new Date(yield* Clock.currentTimeMillis), options.keep).pipe(
              Effect.catchTag("DatabaseUnavailable", () => Effect.fail(new MailNotSent({ detail: "the outbox does not answer" })))
            )
            yield* Effect.logInfo(
              options.logBodies
                ? `sandbox outbox: mail to ${message.to}: ${message.subject}\n${message.text}`
                : `sandbox outbox: mail to ${message.to}: ${message.subject} (read it with: npm run admin -- outbox)`
            )
          })
      })
    })
  )
