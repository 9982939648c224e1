// A plan can be taken off sale by an operator (and put back) without retiring it: the catalog file's entry stays as
// it is, a new order is refused, subscriptions on it renew as before. Few plans are ever off sale: a partial index.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE plans ADD COLUMN IF NOT EXISTS off_sale boolean NOT NULL DEFAULT false`
  yield* sql`CREATE INDEX IF NOT EXISTS plans_off_sale ON plans (id) WHERE off_sale`
})
