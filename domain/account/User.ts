// The account aggregate: who a user is and how they sign in (their sessions are records of their own).
import { Schema } from "effect"
import { Role } from "./Role.ts"

export const UserId = Schema.String.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const AccountType = Schema.Literals(["personal", "professional"])
export type AccountType = typeof AccountType.Type

export const Language = Schema.Literals(["fr", "en"])
export type Language = typeof Language.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  /** Normalised (trimmed, lower-case); unique. */
  email: Schema.String,
  accountType: AccountType,
  firstName: Schema.String,
  lastName: Schema.String,
  /** Registry name of a professional account; null when the registry masks it (partially diffusible unit). */
  companyName: Schema.NullOr(Schema.String),
  siret: Schema.NullOr(Schema.String),
  language: Language,
  passwordHash: Schema.String,
  /** customer, or staff: support | admin (granted with `npm run admin -- users grant`). */
  role: Role,
  createdAt: Schema.Date
}) {}

/** What registration hands to the repository. */
export type NewUser = User
