// A short-lived read cache in front of the SessionRecords repository for the per-request session check.
//
// Every authenticated request reads its session record. Caching that read for a second keeps the check cheap; a
// session ended through this instance is evicted at once, and one ended through another instance is refused here
// within `ttl` (the cache never serves what the database said more than `ttl` ago). No notification channel is
// needed, so the embedded database works the same as PostgreSQL.
import { Effect, Layer, Option } from "effect"
import type { SessionId } from "../domain/account/SessionRecord.ts"
import { SessionRecords } from "../ports/SessionRecords.ts"
import { makeReadCache, type ReadCacheOptions } from "./ReadCache.ts"

export const layer = (options: ReadCacheOptions) =>
  Layer.effect(
    SessionRecords,
    Effect.gen(function*() {
      const sessions = yield* SessionRecords
      const cache = yield* makeReadCache((id: SessionId) => sessions.find(id), options)
      return SessionRecords.of({
        ...sessions,
        find: cache.get,
        // The cached copy moves too, so the next requests of this session do not write again.
        touch: (id, at) =>
          Effect.andThen(
            cache.update(id, Option.map((s) => (s.lastSeenAt < at ? { ...s, lastSeenAt: at } : s))),
            sessions.touch(id, at)
          ),
        end: (id) => Effect.ensuring(sessions.end(id), cache.evict(id)),
        endAllOf: (userId) => Effect.ensuring(sessions.endAllOf(userId), cache.evictWhere((s) => Option.isSome(s) && s.value.userId === userId))
      })
    })
  )
