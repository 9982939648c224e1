// A fast, deterministic PasswordHasher for domain tests: `fake$<cost>$<password>`, no real hashing.
import { Effect, Layer, Redacted } from "effect"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"

const costOf = (hash: string): number => Number(hash.split("$")[1] ?? "0")

export const make = (cost: number) =>
  PasswordHasher.of({
    hash: (password) => Effect.succeed(`fake$${cost}$${Redacted.value(password)}`),
    verify: (password, hash) =>
      Effect.succeed(hash.startsWith("fake$") && hash.slice(hash.indexOf("$", 5) + 1) === Redacted.value(password)),
    needsRehash: (hash) => costOf(hash) < cost,
    decoy: `fake$${cost}$\u0000decoy`
  })

export const layer = (cost = 10) => Layer.succeed(PasswordHasher, make(cost))
