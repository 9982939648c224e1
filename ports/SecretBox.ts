// Authenticated encryption of upstream credentials at rest.
import { Context, type Effect, type Redacted, Schema } from "effect"

export class SecretUnreadable extends Schema.TaggedError<SecretUnreadable>()("SecretUnreadable", {
  reason: Schema.Literals(["MALFORMED", "UNKNOWN_KEY", "TAMPERED"])
}) {}

export class SecretBox extends Context.Service<SecretBox, {
  /**
   * Seals `plaintext` bound to `owner` (the owning record's identity, used as additional authenticated
   * data): a sealed value moved to another record no longer opens.
   */
  seal(plaintext: Redacted.Redacted<string>, owner: string): Effect.Effect<string>
  open(sealed: string, owner: string): Effect.Effect<Redacted.Redacted<string>, SecretUnreadable>
  /** The id of the key new seals use; a value sealed under another key should be re-sealed. */
  readonly currentKeyId: string
  keyIdOf(sealed: string): string | undefined
}>()("zh/ports/SecretBox") {}
