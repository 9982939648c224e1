// A bounded per-instance read cache whose entries live `ttl` at most: what the per-request session check reads
// (its user, its session record) is looked up in the database at most once per `ttl` per key.
import { Clock, Duration, Effect } from "effect"

export interface ReadCacheOptions {
  readonly ttl: Duration.Input
  readonly capacity: number
}

/** A cache on the clock of the layer that builds it (a hit is one clock read and one map lookup, no effect step). */
export const makeReadCache = <V>(options: ReadCacheOptions) =>
  Effect.map(Clock.Clock, (clock) => {
    const ttl = Duration.toMillis(Duration.fromInputUnsafe(options.ttl))
    const entries = new Map<string, { readonly value: V; readonly until: number }>()
    return {
      /**
       * The cached value, or `load`'s. The entry expires `ttl` after the lookup *started*: what the database said
       * then is never served more than `ttl` after a change that committed before it.
       */
      through: <E, R>(key: string, load: Effect.Effect<V, E, R>): Effect.Effect<V, E, R> => {
        const now = clock.currentTimeMillisUnsafe()
        const hit = entries.get(key)
        if (hit !== undefined && hit.until > now) return Effect.succeed(hit.value)
        return Effect.tap(load, (value) =>
          Effect.sync(() => {
            // Map order is insertion order: the oldest entry goes first.
            if (entries.size >= options.capacity) entries.delete(entries.keys().next().value!)
            entries.set(key, { value, until: now + ttl })
          }))
      },
      evict: (key: string) => Effect.sync(() => void entries.delete(key)),
      /** Changes a cached value in place (same expiry), when there is one. */
      update: (key: string, f: (value: V) => V) =>
        Effect.sync(() => {
          const entry = entries.get(key)
          if (entry !== undefined) entries.set(key, { value: f(entry.value), until: entry.until })
        }),
      /** Drops every entry whose value `doomed` picks (a rare write, such as logging a user out everywhere). */
      evictWhere: (doomed: (value: V) => boolean) =>
        Effect.sync(() => {
          for (const [key, entry] of entries) if (doomed(entry.value)) entries.delete(key)
        })
    }
  })
