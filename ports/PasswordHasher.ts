// Slow password hashing; the real adapter runs off the event loop.
import { Context, type Effect, type Redacted } from "effect"

export class PasswordHasher extends Context.Service<PasswordHasher, {
  hash(password: Redacted.Redacted<string>): Effect.Effect<string>
  /** Compares in constant time for the hash's cost; `false` on mismatch or an unreadable hash. */
  verify(password: Redacted.Redacted<string>, hash: string): Effect.Effect<boolean>
  /** True when the hash was made with a lower cost than the configured one. */
  needsRehash(hash: string): boolean
  /** A valid hash of nothing in particular at the configured cost, to spend the same time on unknown accounts. */
  readonly decoy: string
}>()("zh/ports/PasswordHasher") {}
