// bcrypt password hashing; the native binding hashes on libuv's thread pool, off the event loop.
import bcrypt from "bcrypt"
import { Effect, Layer, Redacted } from "effect"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"

const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/

const costOf = (hash: string): number | undefined => {
  const m = BCRYPT_HASH.exec(hash)
  return m?.[1] === undefined ? undefined : Number(m[1])
}

export const make = Effect.fn("BcryptPasswordHasher.make")(function*(cost: number) {
  const hash = (password: Redacted.Redacted<string>) =>
    Effect.promise(() => bcrypt.hash(Redacted.value(password), cost))
  // The decoy costs exactly what a real account's check costs.
  const decoy = yield* hash(Redacted.make("decoy password, never a user's"))
  return PasswordHasher.of({
    hash,
    verify: (password, stored) =>
      costOf(stored) === undefined
        ? Effect.succeed(false)
        : Effect.promise(() => bcrypt.compare(Redacted.value(password), stored)),
    needsRehash: (stored) => (costOf(stored) ?? 0) < cost,
    decoy
  })
})

export const layer = (cost: number) => Layer.effect(PasswordHasher, make(cost))
