// bcrypt password hashing; the native binding hashes on libuv's thread pool, off the event loop.
import bcrypt from "bcrypt"
import { Effect, Layer, Redacted, Semaphore } from "effect"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"

const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/

const costOf = (hash: string): number | undefined => {
  const m = BCRYPT_HASH.exec(hash)
  return m?.[1] === undefined ? undefined : Number(m[1])
}

/**
 * `concurrency` bounds the hashes in flight. libuv's pool (4 threads) also runs WebCrypto, DNS and file I/O:
 * with as many hashes as cores, a burst of logins cannot queue everything else behind it, and hashing at
 * most `cores` at a time loses no throughput.
 */
export const make = Effect.fn("BcryptPasswordHasher.make")(function*(cost: number, concurrency: number) {
  const permits = yield* Semaphore.make(Math.max(1, concurrency))
  const hash = (password: Redacted.Redacted<string>) =>
    permits.withPermits(1)(Effect.promise(() => bcrypt.hash(Redacted.value(password), cost)))
  // The decoy costs exactly what a real account's check costs.
  const decoy = yield* hash(Redacted.make("decoy password, never a user's"))
  return PasswordHasher.of({
    hash,
    verify: (password, stored) =>
      costOf(stored) === undefined
        ? Effect.succeed(false)
        : permits.withPermits(1)(Effect.promise(() => bcrypt.compare(Redacted.value(password), stored))),
    needsRehash: (stored) => (costOf(stored) ?? 0) < cost,
    decoy
  })
})

export const layer = (cost: number, concurrency: number) => Layer.effect(PasswordHasher, make(cost, concurrency))
