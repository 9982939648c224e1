// The real notice delivery of one instance, sending through an SMTP sink, for the e-mail tests that run on the test
// clock; and waiting for what real I/O does (the SMTP exchange, in-memory workflows) while that clock stands still.
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import * as SmtpMailer from "../../adapters/mail/SmtpMailer.ts"
import * as PgNoticeRecords from "../../adapters/postgres/PgNoticeRecords.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { layer as NoticesLive } from "../../domain/notices/deliverNotices.ts"
import { NoticeSettings } from "../../domain/notices/NoticeSettings.ts"
import type { SmtpSink } from "./smtpSink.ts"

/** One instance's real Notices on `database`, sending to `sink` with a connection of its own. */
export const noticesThrough = <E>(sink: SmtpSink, database: Layer.Layer<SqlClient.SqlClient, E>) =>
  NoticesLive.pipe(Layer.provideMerge(Layer.mergeAll(
    Layer.mergeAll(PgNoticeRecords.layer, PgUsers.layer).pipe(Layer.provide(database)),
    SmtpMailer.layer({ url: Redacted.make(`smtp://127.0.0.1:${sink.port}`), from: "ZH <no-reply@panel.test>" }),
    Layer.succeed(NoticeSettings, { ...NoticeSettings.defaults, publicUrl: "https://panel.test" })
  )))

/** Real time passing, the test clock standing still. */
export const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Lets the in-memory workflows and the deliveries run until `done`, in real time (at most `seconds`). */
export const until = <E, R>(done: Effect.Effect<boolean, E, R>, what: string, seconds = 20) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds * 100; i++) {
      if (yield* done) return
      yield* Effect.yieldNow
      yield* pause(10)
    }
    return yield* Effect.die(new Error(`${what} never happened`))
  })

/** Waits until `sink` has received at least `n` e-mails. */
export const mailCount = (sink: SmtpSink, n: number) => until(Effect.sync(() => sink.received.length >= n), `mail ${n}`)

