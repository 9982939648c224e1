// Registering a personal or professional account (the SIRET is checked against the registry).
import { Clock, Effect, Redacted, Result } from "effect"
import { SecureRandom } from "effect/crypto"
import { BusinessRegistry } from "../../ports/BusinessRegistry.ts"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"
import { Users } from "../../ports/Users.ts"
import { EmailAlreadyRegistered, InvalidSiret, SiretClosed, SiretRequired, SiretUnknown } from "./AccountErrors.ts"
import { checkPasswordPolicy, parseEmail } from "./Credentials.ts"
import { parseSiret } from "./Siret.ts"
import { type AccountType, type Language, UserId } from "./User.ts"

export interface Registration {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly accountType: AccountType
  readonly firstName: string
  readonly lastName: string
  readonly siret?: string | undefined
  readonly language: Language
}

/** Checks a professional SIRET: format and checksum locally, then the registry must call it active. */
const verifySiret = Effect.fn("verifySiret")(function*(input: string | undefined) {
  if (input === undefined || input.trim() === "") return yield* new SiretRequired()
  const parsed = parseSiret(input)
  if (Result.isFailure(parsed)) return yield* new InvalidSiret({ problem: parsed.failure })
  const siret = parsed.success
  const status = yield* (yield* BusinessRegistry).lookUpSiret(siret)
  switch (status._tag) {
    case "Active":
      return { siret, companyName: status.companyName }
    case "Closed":
      return yield* new SiretClosed()
    case "Unknown":
      return yield* new SiretUnknown()
  }
})

export const register = Effect.fn("register")(function*(input: Registration) {
  const email = yield* parseEmail(input.email)
  yield* checkPasswordPolicy(input.password)
  const business = input.accountType === "professional"
    ? yield* verifySiret(input.siret)
    : { siret: null, companyName: null }
  const passwordHash = yield* (yield* PasswordHasher).hash(input.password)
  const id = UserId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4())
  const createdAt = new Date(yield* Clock.currentTimeMillis)
  return yield* (yield* Users).insert({
    id,
    email,
    accountType: input.accountType,
    firstName: input.firstName.trim(),
    lastName: input.lastName.trim(),
    companyName: business.companyName,
    siret: business.siret,
    language: input.language,
    passwordHash,
    role: "customer",
    createdAt
  }).pipe(Effect.catchTag("EmailTaken", () => Effect.fail(new EmailAlreadyRegistered())))
})
