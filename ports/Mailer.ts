// Outgoing e-mail.
import { Context, type Effect, Schema } from "effect"

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

export class MailNotSent extends Schema.TaggedError<MailNotSent>()("MailNotSent", { detail: Schema.String }) {}

export class Mailer extends Context.Service<Mailer, {
  send(message: MailMessage): Effect.Effect<void, MailNotSent>
}>()("zh/ports/Mailer") {}
