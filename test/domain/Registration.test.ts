// Specification of registration: personal accounts, and professional accounts whose SIRET is checked
// locally then against the business registry (DESIGN.md §3 "Register").
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { type Registration, register } from "../../domain/account/Registration.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { Users } from "../../ports/Users.ts"
import { domainEnv, outcome, personal, professional } from "../support/domainEnv.ts"
import { SandboxSirets } from "../support/sandboxRegistries.ts"

const stored = (email: string) => Effect.flatMap(Users, (users) => users.findByEmail(email))

/** Registration fails; the test reads the error. */
const refused = (input: Registration) => Effect.flip(register(input))

describe("registering a personal account", () => {
  it.effect("stores the hasher's hash of the password, never the password itself", () =>
    Effect.gen(function*() {
      const hasher = yield* PasswordHasher
      const user = yield* register(personal({ password: Redacted.make("correct horse") }))
      assert.notStrictEqual(user.passwordHash, "correct horse")
      assert.strictEqual(user.passwordHash, yield* hasher.hash(Redacted.make("correct horse")))
      assert.isTrue(yield* hasher.verify(Redacted.make("correct horse"), user.passwordHash))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("stores trimmed names, the normalised e-mail, the language and no business identity", () =>
    Effect.gen(function*() {
      yield* register(personal({ email: "  Alice@Example.COM ", firstName: "  Alice ", lastName: " Martin  ", language: "en" }))
      const user = Option.getOrThrow(yield* stored("alice@example.com"))
      assert.strictEqual(user.email, "alice@example.com")
      assert.strictEqual(user.firstName, "Alice")
      assert.strictEqual(user.lastName, "Martin")
      assert.strictEqual(user.language, "en")
      assert.strictEqual(user.accountType, "personal")
      assert.isNull(user.siret)
      assert.isNull(user.companyName)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("gives each account its own id", () =>
    Effect.gen(function*() {
      const a = yield* register(personal({ email: "a@example.com" }))
      const b = yield* register(personal({ email: "b@example.com" }))
      assert.notStrictEqual(a.id, b.id)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses an e-mail already registered in another case with EmailAlreadyRegistered", () =>
    Effect.gen(function*() {
      const first = yield* register(personal({ email: "alice@example.com" }))
      const error = yield* refused(personal({ email: "ALICE@Example.com", firstName: "Mallory" }))
      assert.strictEqual(error._tag, "EmailAlreadyRegistered")
      assert.strictEqual(Option.getOrThrow(yield* stored("alice@example.com")).id, first.id)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("two registrations of one e-mail at the same time: exactly one account is created", () =>
    Effect.gen(function*() {
      const outcomes = yield* Effect.all(
        [register(personal({ firstName: "First" })), register(personal({ email: "ALICE@example.com", firstName: "Second" }))]
          .map(outcome),
        { concurrency: "unbounded" }
      )
      assert.sameMembers(outcomes, ["Success", "EmailAlreadyRegistered"])
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses a malformed e-mail with InvalidEmail", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* refused(personal({ email: "alice-at-example.com" })))._tag, "InvalidEmail")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("refuses a password outside the policy and stores nothing", () =>
    Effect.gen(function*() {
      const error = yield* refused(personal({ password: Redacted.make("short") }))
      assert.strictEqual(error._tag, "PasswordPolicyViolation")
      assert.isTrue(Option.isNone(yield* stored("alice@example.com")))
    }).pipe(Effect.provide(domainEnv())))
})

describe("registering a professional account", () => {
  it.effect("without a SIRET fails SiretRequired", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* refused(professional(undefined)))._tag, "SiretRequired")
      assert.strictEqual((yield* refused(professional("   ")))._tag, "SiretRequired")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a malformed SIRET fails InvalidSiret SIRET_FORMAT", () =>
    Effect.gen(function*() {
      const error = yield* refused(professional("552 081 317"))
      assert.isTrue(error._tag === "InvalidSiret" && error.problem === "SIRET_FORMAT")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a SIRET failing its checksum fails InvalidSiret SIRET_CHECKSUM", () =>
    Effect.gen(function*() {
      const error = yield* refused(professional("55208131766523"))
      assert.isTrue(error._tag === "InvalidSiret" && error.problem === "SIRET_CHECKSUM")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with an active SIRET is stored with the registry's company name", () =>
    Effect.gen(function*() {
      yield* register(professional(SandboxSirets.edf))
      const user = Option.getOrThrow(yield* stored("alice@example.com"))
      assert.strictEqual(user.accountType, "professional")
      assert.strictEqual(user.siret, SandboxSirets.edf)
      assert.strictEqual(user.companyName, "ELECTRICITE DE FRANCE")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with La Poste's digit-sum-only SIRET is accepted", () =>
    Effect.gen(function*() {
      const user = yield* register(professional(SandboxSirets.laPosteEstablishment))
      assert.strictEqual(user.companyName, "LA POSTE")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a partially diffusible SIRET is stored without a company name", () =>
    Effect.gen(function*() {
      yield* register(professional(SandboxSirets.partiallyDiffusible))
      const user = Option.getOrThrow(yield* stored("alice@example.com"))
      assert.strictEqual(user.siret, SandboxSirets.partiallyDiffusible)
      assert.isNull(user.companyName)
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a SIRET typed with spaces and dots is stored as 14 digits", () =>
    Effect.gen(function*() {
      yield* register(professional("552 081.317 665.22"))
      const user = Option.getOrThrow(yield* stored("alice@example.com"))
      assert.strictEqual(user.siret, "55208131766522")
      assert.strictEqual(user.companyName, "ELECTRICITE DE FRANCE")
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a closed SIRET fails SiretClosed and stores nothing", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* refused(professional(SandboxSirets.closed)))._tag, "SiretClosed")
      assert.isTrue(Option.isNone(yield* stored("alice@example.com")))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("with a SIRET the registry does not know fails SiretUnknown and stores nothing", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* refused(professional(SandboxSirets.unknown)))._tag, "SiretUnknown")
      assert.isTrue(Option.isNone(yield* stored("alice@example.com")))
    }).pipe(Effect.provide(domainEnv())))

  for (const [siret, reason] of [[SandboxSirets.registryDown, "DOWN"], [SandboxSirets.registryThrottled, "THROTTLED"]] as const) {
    it.effect(`when the registry is ${reason} fails RegistryUnavailable ${reason} and stores nothing`, () =>
      Effect.gen(function*() {
        const error = yield* refused(professional(siret))
        assert.isTrue(error._tag === "RegistryUnavailable" && error.reason === reason)
        assert.isTrue(Option.isNone(yield* stored("alice@example.com")))
      }).pipe(Effect.provide(domainEnv())))
  }

  it.effect("an e-mail refused while the registry was unavailable can register once it answers", () =>
    Effect.gen(function*() {
      yield* refused(professional(SandboxSirets.registryDown))
      const user = yield* register(professional(SandboxSirets.googleFrance))
      assert.strictEqual(user.email, "alice@example.com")
    }).pipe(Effect.provide(domainEnv())))
})
