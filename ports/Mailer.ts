// Outgoing e-mail.
import { Context, type Effect, Schema } from "effect"

/** A file sent with a message (an invoice's PDF). */
export interface MailAttachment {
  readonly filename: string
  readonly contentType: string
  readonly content: Uint8Array
}

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
  readonly attachments?: ReadonlyArray<MailAttachment>
}

export class MailNotSent extends Schema.TaggedError<MailNotSent>()("MailNotSent", { detail: Schema.String }) {}

export class Mailer extends Context.Service<Mailer, {
  send(message: MailMessage): Effect.Effect<void, MailNotSent>
}>()("zh/ports/Mailer") {}
