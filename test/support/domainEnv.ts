// A fresh in-memory world for domain tests: every fake port, real HS256 session tokens, Node crypto, and
// a PasswordHasher that records what it was asked to do. Each call builds new state.
import { NodeCrypto } from "@effect/platform-node"
import { Context, Effect, Layer, Redacted, Ref } from "effect"
import * as JoseSessionTokens from "../../adapters/crypto/JoseSessionTokens.ts"
import * as MemoryAuditLog from "../../adapters/fake/MemoryAuditLog.ts"
import * as FastPasswordHasher from "../../adapters/fake/FastPasswordHasher.ts"
import * as IdentityUnitOfWork from "../../adapters/fake/IdentityUnitOfWork.ts"
import * as MemoryLoginAttempts from "../../adapters/fake/MemoryLoginAttempts.ts"
import * as MemoryMailer from "../../adapters/fake/MemoryMailer.ts"
import { SentMail } from "../../adapters/fake/MemoryMailer.ts"
import * as MemoryPasswordResets from "../../adapters/fake/MemoryPasswordResets.ts"
import * as MemorySessionRecords from "../../adapters/fake/MemorySessionRecords.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import { AccountSettings, type AccountSettingsShape } from "../../domain/account/AccountSettings.ts"
import { type Registration, register } from "../../domain/account/Registration.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { businessRegistry } from "./sandboxRegistries.ts"

export const publicUrl = "https://panel.zh.test"

/** The configured hashing cost of the default environment. */
export const defaultCost = 10

/** What the environment's PasswordHasher was asked to do, in order. */
export class HasherCalls extends Context.Service<HasherCalls, {
  /** The hash each `verify` call compared against. */
  readonly verified: Effect.Effect<ReadonlyArray<string>>
  readonly hashes: Effect.Effect<number>
}>()("test/HasherCalls") {}

/**
 * FastPasswordHasher at `cost`, counting calls. `verify` yields first, as real hashing leaves the fiber,
 * so concurrent logins genuinely interleave around the password check.
 */
const countingHasher = (cost: number) =>
  Layer.effectContext(Effect.gen(function*() {
    const inner = FastPasswordHasher.make(cost)
    const verified = yield* Ref.make<ReadonlyArray<string>>([])
    const hashes = yield* Ref.make(0)
    const hasher = PasswordHasher.of({
      hash: (password) => Effect.andThen(Ref.update(hashes, (n) => n + 1), inner.hash(password)),
      verify: (password, hash) =>
        Ref.update(verified, (all) => [...all, hash]).pipe(
          Effect.andThen(Effect.yieldNow),
          Effect.andThen(inner.verify(password, hash))
        ),
      needsRehash: inner.needsRehash,
      decoy: inner.decoy
    })
    return Context.make(PasswordHasher, hasher).pipe(
      Context.add(HasherCalls, HasherCalls.of({ verified: Ref.get(verified), hashes: Ref.get(hashes) }))
    )
  }))

export interface DomainEnvOptions {
  readonly cost?: number
  readonly settings?: Partial<AccountSettingsShape>
}

const sessionKey = Redacted.make(new TextEncoder().encode("domain-tests-session-key-32bytes!"))

export const domainEnv = (options: DomainEnvOptions = {}) =>
  Layer.mergeAll(
    MemoryAuditLog.layer,
    MemoryUsers.layer,
    MemoryPasswordResets.layer,
    MemorySessionRecords.layer,
    MemoryLoginAttempts.layer,
    IdentityUnitOfWork.layer,
    MemoryMailer.layer,
    businessRegistry,
    countingHasher(options.cost ?? defaultCost),
    JoseSessionTokens.layer(sessionKey).pipe(Layer.provide(NodeCrypto.layerMac)),
    NodeCrypto.layerSecureRandom,
    NodeCrypto.layerDigest,
    Layer.succeed(AccountSettings, AccountSettings.of({ ...AccountSettings.defaults, publicUrl, ...options.settings }))
  )

/** A valid personal registration; override what the test is about. */
export const personal = (overrides: Partial<Registration> = {}): Registration => ({
  email: "alice@example.com",
  password: Redacted.make("correct horse"),
  accountType: "personal",
  firstName: "Alice",
  lastName: "Martin",
  language: "fr",
  ...overrides
})

export const professional = (siret: string | undefined, overrides: Partial<Registration> = {}): Registration =>
  personal({ accountType: "professional", siret, ...overrides })

/** Registers Alice (or whoever the overrides describe). */
export const registered = (overrides: Partial<Registration> = {}) => register(personal(overrides))

/** The reset token in the link of the last mail sent. */
export const mailedResetToken = Effect.gen(function*() {
  const messages = yield* (yield* SentMail).messages
  const match = /\/reset-password\?token=([0-9a-f]{64})/.exec(messages.at(-1)?.text ?? "")
  if (match?.[1] === undefined) return yield* Effect.die(new Error("no reset link in the last mail"))
  return match[1]
})

/** The tag of the failure, or "Success": lets a test compare outcomes, also of concurrent runs. */
export const outcome = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.match(effect, { onFailure: (e): string => e._tag, onSuccess: () => "Success" })
