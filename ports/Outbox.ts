// The sandbox mail outbox: the latest messages sent without an SMTP server, readable by operators.
import { Context, type Effect } from "effect"
import type { MailMessage } from "./Mailer.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface OutboxEntry extends MailMessage {
  readonly id: number
  readonly sentAt: Date
}

export class Outbox extends Context.Service<Outbox, {
  /** Appends and keeps only the newest `keep` messages. */
  append(message: MailMessage, sentAt: Date, keep: number): Effect.Effect<void, DatabaseUnavailable>
  /** Newest first. */
  latest(limit: number): Effect.Effect<ReadonlyArray<OutboxEntry>, DatabaseUnavailable>
}>()("zh/ports/Outbox") {}
