// Readiness: the database answers a trivial query within a short deadline.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Health, StoreUnreachable } from "../../ports/Health.ts"

export const layer = Layer.effect(
  Health,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Health.of({
      checkStore: sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.asVoid,
        Effect.mapError(() => new StoreUnreachable())
      )
    }))
)
