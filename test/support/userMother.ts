// Builds the users the contract suites store: a fixed, valid person under a fresh id, changed only where a test says.
import { type NewUser, UserId } from "../../domain/account/User.ts"

let n = 0

/** A personal account for `email`, with a unique id per call. */
export const newUser = (email: string, overrides: Partial<NewUser> = {}): NewUser => ({
  id: UserId.make(`00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`),
  email,
  accountType: "personal",
  firstName: "Ada",
  lastName: "Lovelace",
  companyName: null,
  siret: null,
  language: "en",
  passwordHash: "hash-1",
  role: "customer",
  createdAt: new Date("2026-01-02T03:04:05.000Z"),
  ...overrides
})
