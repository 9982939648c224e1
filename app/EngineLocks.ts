// The workflow engine's shard-lock storage (effect/cluster's SqlRunnerStorage), guarded so that a database outage,
// however short, ends with every shard locked again and every workflow carried on, never with a run left suspended.
import { Effect, Exit, Layer } from "effect"
import { RunnerStorage, SqlRunnerStorage } from "effect/cluster"
import { PersistenceError } from "effect/cluster/ClusterError"
import { SqlClient } from "effect/sql"

type Storage = RunnerStorage.RunnerStorage["Service"]

/**
 * Works around effect/cluster 4.1.0. SqlRunnerStorage keeps the shard locks on a connection of its own (`lockConn`;
 * advisory locks belong to its session), which dies unnoticed while idle when the database goes away and is replaced
 * only after a statement failed on it. The first statement after the database is back is often the check Sharding
 * makes before it saves a reply (`confirmShardLock`: a one-shard `refresh`). Sharding reads that failure as "this
 * runner no longer owns the shard": the reply is dropped and its request left for redelivery (entityManager's
 * "Abandoning a request whose shard this runner no longer owns"), yet the shard stays acquired and the workflow run
 * stays alive. Redelivered to that same run, a dropped activity reply turns into `Suspended` (ClusterWorkflowEngine's
 * `activity` handler no longer finds the activity, which its first execution removed, and `activityExecute` hands
 * the `Suspended` to the run), so the run suspends with nothing to wake it and its order never finishes.
 *
 * So a refresh of held shards that fails is made again once, on the connection the failure replaced: a connection
 * that died while idle never answers for the locks. When that second answer confirms every shard (table leases
 * outlive their connection), nothing was lost. Otherwise (the database still away; or advisory locks, gone with their
 * session) the refresh fails, and until the storage has answered Sharding's probe (a `refresh` of no shard) every
 * refresh of held shards fails too: Sharding's next periodic refresh then marks the lock storage unhealthy
 * (`markShardLocksUnhealthy`), which interrupts every entity at once, and after its probe succeeds it releases,
 * locks and resets every shard again, so each workflow, the one whose reply was dropped included, is replayed from
 * storage. (Were the lost shards handed to Sharding's ordinary release instead, it would wait up to
 * `entityTerminationTimeout`, 15 s, for a run that waits on its own dropped reply.)
 */
export const guardLocks = (inner: Storage): Storage => {
  let suspect = false
  const unhealthy = new PersistenceError({ cause: new Error("the shard locks are taken again after a storage failure") })
  const lost = new PersistenceError({ cause: new Error("the shard locks were lost with their connection") })
  return RunnerStorage.RunnerStorage.of({
    ...inner,
    refresh: (address, shardIds) =>
      Effect.suspend(() => {
        const ids = Array.from(shardIds)
        if (ids.length === 0) {
          return inner.refresh(address, ids).pipe(Effect.tap(() => Effect.sync(() => void (suspect = false))))
        }
        if (suspect) return Effect.fail(unhealthy)
        const asked = new Set(ids.map(String)).size
        return inner.refresh(address, ids).pipe(
          Effect.catch(() =>
            inner.refresh(address, ids).pipe(
              Effect.filterOrFail((held) => new Set(held.map(String)).size === asked, () => lost)
            )
          ),
          // Interrupted (a caller's deadline) counts too: the caller took it for "not owned".
          Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => void (suspect = true)))
        )
      })
  })
}

/** SqlRunnerStorage behind `guardLocks`. */
export const GuardedSqlRunnerStorage = Layer.effect(
  RunnerStorage.RunnerStorage,
  Effect.map(RunnerStorage.RunnerStorage, guardLocks)
).pipe(Layer.provide(Layer.orDie(SqlRunnerStorage.layer)))

/**
 * The client as the one session of PGlite it is: `driver` says "pglite" (the @effect/sql-pg client we reach PGlite
 * with over our socket, app/EmbeddedPgServer.ts, names no driver), the rest is the client itself.
 */
export const asPgliteSession = (sql: SqlClient.SqlClient): SqlClient.SqlClient =>
  new Proxy(sql, { get: (target, key, receiver) => key === "driver" ? "pglite" : Reflect.get(target, key, receiver) })

/**
 * `GuardedSqlRunnerStorage` on the embedded database. effect/cluster 4.1.0's SqlRunnerStorage (`makeStorage`) keeps
 * every shard-lock operation on one reserved connection of its own (`lockConn`) unless `sql.driver === "pglite"`,
 * and only PGlite's own driver says so. Served over a socket, PGlite runs one statement at a time for all our
 * connections, each inside a transaction holding it to the end (EmbeddedPgServer.ts): the lock statements, one by
 * one on that connection, each wait their turn behind the workflows' transactions. At a stop Sharding hands every
 * one of its 300 shards off at once (`releaseShard`, a DELETE each), so while a hundred workflows drain their
 * activities the queue takes longer than one lock operation may (`withLockOperationDeadline`, the lock refresh
 * interval); every release still queued fails at that deadline, each failure rebuilds `lockConn` (retiring it with
 * the other releases on it), and all are tried again together: the releases never get through and the stop never
 * ends. As PGlite, the storage keeps its leases on the shared pool, as upstream intends for it ("the storage never
 * holds their only connection"): a release that waits too long fails alone, and the others go on.
 */
export const GuardedPgliteRunnerStorage = GuardedSqlRunnerStorage.pipe(
  Layer.provide(Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, asPgliteSession)))
)
