// A bounded per-instance read cache whose entries live `ttl` at most, on effect's Cache: what the per-request session
// check reads (its user, its session record) is looked up in the database at most once per `ttl` per key; concurrent
// misses of one key share one lookup, and the least recently read entry goes first when the cache is full.
import { Cache, Clock, Duration, Effect, Exit } from "effect"

export interface ReadCacheOptions {
  readonly ttl: Duration.Input
  readonly capacity: number
  /**
   * Whether the caller is inside a database transaction: such a read goes to the repository on the transaction's own
   * connection, past the cache. Through the cache it could join a lookup another request started, which waits for a
   * pooled connection while the transactions hold them all (each waiting in turn for that lookup: a deadlock until
   * something times out), and what a transaction reads before it commits is never served to anyone else.
   */
  readonly inTransaction?: Effect.Effect<boolean> | undefined
}

/** A cached value and when the lookup that read it started. */
interface Read<V> {
  readonly value: V
  readonly readAt: number
}

/**
 * A cache of `lookup` on the clock of the layer that builds it. An entry expires `ttl` after its lookup *started*:
 * what the database said then is never served more than `ttl` after a change that committed before it. A failed
 * lookup (the database does not answer) is not kept.
 */
export const makeReadCache = <K, V, E>(lookup: (key: K) => Effect.Effect<V, E>, options: ReadCacheOptions) =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const ttl = Duration.toMillis(Duration.fromInputUnsafe(options.ttl))
    const left = (exit: Exit.Exit<Read<V>, E>) =>
      Exit.isSuccess(exit) ? Math.max(0, exit.value.readAt + ttl - clock.currentTimeMillisUnsafe()) : 0
    const cache = yield* Cache.makeWith(
      (key: K) => Effect.flatMap(Clock.currentTimeMillis, (readAt) => Effect.map(lookup(key), (value): Read<V> => ({ value, readAt }))),
      { capacity: options.capacity, timeToLive: left }
    )
    const inTransaction = options.inTransaction ?? Effect.succeed(false)
    return {
      get: (key: K): Effect.Effect<V, E> =>
        Effect.flatMap(inTransaction, (inside) => inside ? lookup(key) : Effect.map(Cache.get(cache, key), (read) => read.value)),
      evict: (key: K) => Cache.invalidate(cache, key),
      /** Changes a cached value in place (same expiry), when there is one. */
      update: (key: K, f: (value: V) => V) =>
        Effect.flatMap(Cache.getOption(cache, key), (read) =>
          read._tag === "Some" ? Cache.set(cache, key, { value: f(read.value.value), readAt: read.value.readAt }) : Effect.void).pipe(
            // A lookup of this key failing meanwhile leaves nothing to change.
            Effect.ignore
          ),
      /** Drops every entry whose value `doomed` picks (a rare write, such as logging a user out everywhere). */
      evictWhere: (doomed: (value: V) => boolean) =>
        Effect.flatMap(Cache.entries(cache), (all) =>
          Effect.forEach([...all].filter(([, read]) => doomed(read.value)), ([key]) => Cache.invalidate(cache, key), { discard: true }))
    }
  })
