// What a repository answers when a statement fails. The database not answering (a connection that cannot be opened
// or is lost) is the ports' DatabaseUnavailable: retryable, the edge answers 503 with Retry-After. Anything else is
// our bug and stays a defect: a statement the database refuses, a row that does not decode, a unique constraint no
// repository expected (the edge answers that one 409: a concurrent request won).
import { Cause, Effect, Schema } from "effect"
import { SqlError } from "effect/sql"
import { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"

type StoreFailure = SqlError.SqlError | Schema.SchemaError | Cause.NoSuchElementError

const isStoreFailure = (e: unknown): e is StoreFailure =>
  SqlError.isSqlError(e) || Schema.isSchemaError(e) || Cause.isNoSuchElementError(e)

/** A failed statement: DatabaseUnavailable when the database does not answer, otherwise a defect. */
export const sqlFailure = (e: StoreFailure): Effect.Effect<never, DatabaseUnavailable> =>
  SqlError.isSqlError(e) && e.reason._tag === "ConnectionError"
    ? Effect.fail(new DatabaseUnavailable({ cause: e }))
    : Effect.die(e)

/** The statement's failures as the port speaks them: DatabaseUnavailable, or a defect; other failures pass. */
export const stored = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (e: E): e is E & StoreFailure => isStoreFailure(e), sqlFailure)
