// The sandbox mail outbox in Postgres, so the admin CLI (another process) can read what the server "sent".
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Outbox } from "../../ports/Outbox.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const EntryRow = snakeColumns(
  Schema.Struct({
    id: Schema.NumberFromString,
    to: Schema.String,
    subject: Schema.String,
    text: Schema.String,
    html: Schema.String,
    sentAt: Schema.Date
  }),
  { to: "recipient", text: "text_body", html: "html_body" }
)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const latest = SqlSchema.findAll({
    Request: Schema.Int,
    Result: EntryRow,
    execute: (limit) =>
      sql`SELECT id::text AS id, recipient, subject, text_body, html_body, sent_at
          FROM mail_outbox ORDER BY mail_outbox.id DESC LIMIT ${limit}`
  })
  return Outbox.of({
    append: (message, sentAt, keep) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO mail_outbox (recipient, subject, text_body, html_body, sent_at)
                   VALUES (${message.to}, ${message.subject}, ${message.text}, ${message.html}, ${sentAt})`
        yield* sql`DELETE FROM mail_outbox WHERE id NOT IN (SELECT id FROM mail_outbox ORDER BY id DESC LIMIT ${keep})`
      })).pipe(stored),
    latest: (limit) => latest(limit).pipe(stored)
  })
})

export const layer = Layer.effect(Outbox, make)
