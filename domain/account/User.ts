// The account aggregate: who a user is, how they sign in, and the version that revokes their sessions.
import { Schema } from "effect"

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
  /** Bumped by a password reset or "log out everywhere": tokens carrying an older value are refused. */
  sessionVersion: Schema.Int,
  createdAt: Schema.Date
}) {}

/** What registration hands to the repository: everything but the counters it owns. */
export type NewUser = Omit<User, "sessionVersion">
