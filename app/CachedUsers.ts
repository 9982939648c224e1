// A short-lived read cache in front of the Users repository for the per-request session check.
//
// Every authenticated request loads its user. Caching that read for a second takes the database off the hot path;
// writes made through this instance (password change, language) evict the entry at once, so only a change made by
// *another* instance can go unseen, and for at most `ttl`. Lookups by e-mail (sign-in) and every write go straight
// to the repository.
import { Effect, Layer } from "effect"
import type { UserId } from "../domain/account/User.ts"
import { Users } from "../ports/Users.ts"
import { makeReadCache, type ReadCacheOptions } from "./ReadCache.ts"

export const layer = (options: ReadCacheOptions) =>
  Layer.effect(
    Users,
    Effect.gen(function*() {
      const users = yield* Users
      const cache = yield* makeReadCache((id: UserId) => users.findById(id), options)
      return Users.of({
        ...users,
        // On every authenticated request.
        findById: cache.get,
        setPasswordHash: (id, hash) => Effect.ensuring(users.setPasswordHash(id, hash), cache.evict(id)),
        upgradePasswordHash: (id, expected, next) => Effect.ensuring(users.upgradePasswordHash(id, expected, next), cache.evict(id)),
        setLanguage: (id, language) => Effect.ensuring(users.setLanguage(id, language), cache.evict(id)),
        setRole: (id, role) => Effect.ensuring(users.setRole(id, role), cache.evict(id))
      })
    })
  )
