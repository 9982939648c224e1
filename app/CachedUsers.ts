// A short-lived read cache in front of the Users repository for the per-request session check.
//
// Every authenticated request loads its user to compare the session version. Caching that read for a second
// takes the database off the hot path; writes made through this instance (password change, log out everywhere,
// language) evict the entry at once, so only a change made by *another* instance can go unseen, and for at most
// `ttl`. Lookups by e-mail (sign-in) and every write go straight to the repository.
import { Clock, Duration, Effect, Layer, Option } from "effect"
import type { User } from "../domain/account/User.ts"
import { Users } from "../ports/Users.ts"

export const layer = (options: { readonly ttl: Duration.Input; readonly capacity: number }) =>
  Layer.effect(
    Users,
    Effect.gen(function*() {
      const users = yield* Users
      const ttl = Duration.toMillis(Duration.fromInputUnsafe(options.ttl))
      const entries = new Map<string, { readonly user: Option.Option<User>; readonly until: number }>()
      const evict = (id: string) => Effect.sync(() => entries.delete(id))
      const remember = (id: string, user: Option.Option<User>, now: number) =>
        Effect.sync(() => {
          if (entries.size >= options.capacity) entries.delete(entries.keys().next().value!)
          entries.set(id, { user, until: now + ttl })
        })
      return Users.of({
        ...users,
        // On every authenticated request: a hit is one clock read and one map lookup.
        findById: (id) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const hit = entries.get(id)
            if (hit !== undefined && hit.until > now) return Effect.succeed(hit.user)
            return Effect.tap(users.findById(id), (user) => remember(id, user, now))
          }),
        setPasswordHash: (id, hash, opts) => Effect.ensuring(users.setPasswordHash(id, hash, opts), evict(id)),
        upgradePasswordHash: (id, expected, next) => Effect.ensuring(users.upgradePasswordHash(id, expected, next), evict(id)),
        revokeSessions: (id) => Effect.ensuring(users.revokeSessions(id), evict(id)),
        setLanguage: (id, language) => Effect.ensuring(users.setLanguage(id, language), evict(id))
      })
    })
  )
