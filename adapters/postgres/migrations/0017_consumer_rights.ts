// The consumer's rights (billing-fr.md §4): an order keeps when its customer expressly asked the service to start
// before the 14-day withdrawal period ends (null: not asked, as for a professional account); a subscription keeps when
// its customer withdrew from the contract (terminated then at once) and when the withdrawal's refund and credit note
// were settled (null while a process that died before it leaves it to the lifecycle sweep).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN IF NOT EXISTS express_start_requested_at timestamptz`
  yield* sql`ALTER TABLE subscriptions ADD COLUMN IF NOT EXISTS withdrawn_at timestamptz`
  yield* sql`ALTER TABLE subscriptions ADD COLUMN IF NOT EXISTS withdrawal_settled_at timestamptz`
  yield* sql`CREATE INDEX IF NOT EXISTS subscriptions_withdrawal_unsettled ON subscriptions (withdrawn_at)
             WHERE withdrawn_at IS NOT NULL AND withdrawal_settled_at IS NULL`
})
