// UnitOfWork as a Postgres transaction: repository calls inside share one connection and commit together.
import { Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { sqlFailure } from "./failures.ts"

export const layer = Layer.effect(
  UnitOfWork,
  Effect.map(SqlClient.SqlClient, (sql) =>
    UnitOfWork.of({
      transaction: (effect) =>
        // Only the transaction's own statements (BEGIN, COMMIT) fail with SqlError here: the repositories inside
        // already answered theirs.
        sql.withTransaction(effect).pipe(Effect.catchIf(SqlError.isSqlError, sqlFailure))
    }))
)
