// Inside a durable workflow, a database outage stays a defect of the activity, as it always was: the engine keeps its
// own state in the same database, so it cannot record the activity's outcome either, and carries the workflow on
// once the database is back (the engine guard; unfinished orders are resumed by any instance).
import { Effect } from "effect"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"

export const dieOnDatabaseOutage = <A, E, R>(
  effect: Effect.Effect<A, E | DatabaseUnavailable, R>
): Effect.Effect<A, Exclude<E, DatabaseUnavailable>, R> =>
  Effect.catchIf(
    effect,
    (e): e is DatabaseUnavailable => typeof e === "object" && e !== null && "_tag" in e && e._tag === "DatabaseUnavailable",
    Effect.die
  ) as Effect.Effect<A, Exclude<E, DatabaseUnavailable>, R>
