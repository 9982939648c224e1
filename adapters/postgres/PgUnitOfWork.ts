// UnitOfWork as a Postgres transaction: repository calls inside share one connection and commit together.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"

export const layer = Layer.effect(
  UnitOfWork,
  Effect.map(SqlClient.SqlClient, (sql) =>
    UnitOfWork.of({
      transaction: (effect) =>
        sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    }))
)
