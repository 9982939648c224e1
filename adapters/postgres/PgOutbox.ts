// The sandbox mail outbox in Postgres, so the admin CLI (another process) can read what the server "sent".
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Outbox } from "../../ports/Outbox.ts"

const Rows = Schema.Array(Schema.Struct({
  id: Schema.NumberFromString,
  recipient: Schema.String,
  subject: Schema.String,
  text_body: Schema.String,
  html_body: Schema.String,
  sent_at: Schema.Date
}))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Outbox.of({
    append: (message, sentAt, keep) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO mail_outbox (recipient, subject, text_body, html_body, sent_at)
                   VALUES (${message.to}, ${message.subject}, ${message.text}, ${message.html}, ${sentAt})`
        yield* sql`DELETE FROM mail_outbox WHERE id NOT IN (SELECT id FROM mail_outbox ORDER BY id DESC LIMIT ${keep})`
      })).pipe(Effect.orDie),
    latest: (limit) =>
      sql`SELECT id::text AS id, recipient, subject, text_body, html_body, sent_at
          FROM mail_outbox ORDER BY mail_outbox.id DESC LIMIT ${limit}`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Rows)),
        Effect.map((rows) =>
          rows.map((r) => ({ id: r.id, to: r.recipient, subject: r.subject, text: r.text_body, html: r.html_body, sentAt: r.sent_at }))
        ),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(Outbox, make)
