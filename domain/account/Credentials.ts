// E-mail normalisation and the password policy shared by registration and reset.
import { Effect, Redacted } from "effect"
import { InvalidEmail, PasswordPolicyViolation } from "./AccountErrors.ts"

/** Pragmatic shape check: one @, no spaces, a dot in the domain; the mailbox itself is proven by mail. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const normaliseEmail = (input: string): string => input.trim().toLowerCase()

export const parseEmail = (input: string): Effect.Effect<string, InvalidEmail> => {
  const email = normaliseEmail(input)
  return email.length <= 254 && EMAIL.test(email) ? Effect.succeed(email) : Effect.fail(new InvalidEmail())
}

const encoder = new TextEncoder()

/** 8..72 UTF-8 bytes: bcrypt reads only the first 72, so longer passwords would be silently truncated. */
export const checkPasswordPolicy = (
  password: Redacted.Redacted<string>
): Effect.Effect<void, PasswordPolicyViolation> => {
  const bytes = encoder.encode(Redacted.value(password)).length
  if (bytes < 8) return Effect.fail(new PasswordPolicyViolation({ problem: "TOO_SHORT" }))
  if (bytes > 72) return Effect.fail(new PasswordPolicyViolation({ problem: "TOO_LONG" }))
  return Effect.void
}
