import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as PgOutbox from "../../adapters/postgres/PgOutbox.ts"
import { Outbox } from "../../ports/Outbox.ts"
import { sqlBackends } from "../support/databases.ts"

const [, db] = sqlBackends()[0]!
layer(PgOutbox.layer.pipe(Layer.provideMerge(db)), { excludeTestServices: true })("dbg", (it) => {
  it.effect("x", () => Effect.gen(function*() {
    const o = yield* Outbox
    const sql = yield* SqlClient.SqlClient
    const m = (t: string) => ({ to: t, subject: "s", text: "t", html: "h" })
    for (const [t, k] of [["a1", 100], ["a2", 100], ["a3", 100], ["b1", 3], ["b2", 3], ["b3", 3], ["b4", 3], ["b5", 3], ["c1", 100], ["c2", 100], ["c3", 100], ["c4", 100]] as const) {
      yield* o.append(m(t), new Date(), k)
      const rows = yield* sql`SELECT id::text AS id, recipient FROM mail_outbox ORDER BY id`
      yield* Effect.logInfo(t, k, JSON.stringify(rows))
    }
    assert.isTrue(true)
  }))
})
