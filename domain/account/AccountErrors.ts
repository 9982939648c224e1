// Everything that can go wrong in the account flows, as values. The HTTP edge maps each to a status once.
import { Schema } from "effect"

export class EmailAlreadyRegistered extends Schema.TaggedError<EmailAlreadyRegistered>()("EmailAlreadyRegistered", {}) {
  override get message() { return "An account already exists for this e-mail address." }
}

export class InvalidEmail extends Schema.TaggedError<InvalidEmail>()("InvalidEmail", {}) {
  override get message() { return "The e-mail address is not valid." }
}

export class PasswordPolicyViolation extends Schema.TaggedError<PasswordPolicyViolation>()("PasswordPolicyViolation", {
  problem: Schema.Literals(["TOO_SHORT", "TOO_LONG"])
}) {
  override get message() {
    return this.problem === "TOO_SHORT"
      ? "The password must be at least 8 bytes long."
      : "The password must be at most 72 bytes long (UTF-8)."
  }
}

export class SiretRequired extends Schema.TaggedError<SiretRequired>()("SiretRequired", {}) {
  override get message() { return "A professional account needs a SIRET number." }
}

export class InvalidSiret extends Schema.TaggedError<InvalidSiret>()("InvalidSiret", {
  problem: Schema.Literals(["SIRET_FORMAT", "SIRET_CHECKSUM"])
}) {
  override get message() {
    return this.problem === "SIRET_FORMAT"
      ? "A SIRET number has 14 digits."
      : "This SIRET number fails its checksum; please check it."
  }
}

export class SiretUnknown extends Schema.TaggedError<SiretUnknown>()("SiretUnknown", {}) {
  override get message() { return "No active public establishment is registered under this SIRET number." }
}

export class SiretClosed extends Schema.TaggedError<SiretClosed>()("SiretClosed", {}) {
  override get message() { return "The establishment or company registered under this SIRET number is closed." }
}

export class InvalidCredentials extends Schema.TaggedError<InvalidCredentials>()("InvalidCredentials", {}) {
  override get message() { return "Wrong e-mail address or password." }
}

export class LoginThrottled extends Schema.TaggedError<LoginThrottled>()("LoginThrottled", {
  retryAfterSeconds: Schema.Int
}) {
  override get message() { return "Too many failed sign-in attempts; try again later." }
}

export class ResetThrottled extends Schema.TaggedError<ResetThrottled>()("ResetThrottled", {
  retryAfterSeconds: Schema.Int
}) {
  override get message() { return "Too many password reset attempts from this address; try again later." }
}

export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  reason: Schema.Literals(["MISSING", "INVALID", "EXPIRED", "REVOKED"])
}) {
  override get message() { return "You are not signed in, or your session has ended." }
}

export class ResetTokenInvalid extends Schema.TaggedError<ResetTokenInvalid>()("ResetTokenInvalid", {}) {
  override get message() { return "This password reset link is not valid." }
}

export class ResetTokenExpired extends Schema.TaggedError<ResetTokenExpired>()("ResetTokenExpired", {}) {
  override get message() { return "This password reset link has expired; ask for a new one." }
}

export class ResetTokenUsed extends Schema.TaggedError<ResetTokenUsed>()("ResetTokenUsed", {}) {
  override get message() { return "This password reset link has already been used." }
}

/** A signed-in user whose role does not allow this (the back-office to a customer, an admin action to support). */
export class NotPermitted extends Schema.TaggedError<NotPermitted>()("NotPermitted", {}) {
  override get message() { return "You are not allowed to do this." }
}
