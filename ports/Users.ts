// Persistence of user accounts, one row per user.
import { Context, type Effect, type Option, Schema } from "effect"
import type { Role } from "../domain/account/Role.ts"
import type { Language, NewUser, User, UserId } from "../domain/account/User.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class EmailTaken extends Schema.TaggedError<EmailTaken>()("EmailTaken", {}) {}

export class Users extends Context.Service<Users, {
  /** Fails `EmailTaken` when the e-mail (case-insensitive) is already registered; never check-then-insert. */
  insert(user: NewUser): Effect.Effect<User, EmailTaken | DatabaseUnavailable>
  findById(id: UserId): Effect.Effect<Option.Option<User>, DatabaseUnavailable>
  findByEmail(email: string): Effect.Effect<Option.Option<User>, DatabaseUnavailable>
  /** Replaces the hash (a reset: ending the user's sessions is the SessionRecords' part of the same unit of work). */
  setPasswordHash(id: UserId, hash: string): Effect.Effect<void, DatabaseUnavailable>
  /**
   * Replaces the hash only if it is still `expected` (a stronger rehash of the same password after login);
   * false when the password changed meanwhile, so a slow rehash never brings an old password back.
   */
  upgradePasswordHash(id: UserId, expected: string, next: string): Effect.Effect<boolean, DatabaseUnavailable>
  setLanguage(id: UserId, language: Language): Effect.Effect<void, DatabaseUnavailable>
  /** Gives the user `role`; the role held before, or None when there is no such user. */
  setRole(id: UserId, role: Role): Effect.Effect<Option.Option<Role>, DatabaseUnavailable>
  /**
   * The back-office's search, at most `limit` users ordered by e-mail: `query` (already trimmed and lower-cased) is a
   * prefix of the e-mail, the first or last name, the company name, or of the SIRET. When more match, which `limit`
   * are shown is the store's choice (a search narrows; it does not list the base): never a slow read of every match.
   */
  search(query: string, limit: number): Effect.Effect<ReadonlyArray<User>, DatabaseUnavailable>
}>()("zh/ports/Users") {}
