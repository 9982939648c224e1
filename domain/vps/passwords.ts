// Root passwords for new servers: strong, random, typeable at a serial console.
import { Effect, Redacted } from "effect"
import { SecureRandom } from "effect/crypto"

/** No look-alikes (0/O, 1/l/I) and no shell or keyboard-layout troublemakers: typed by hand at a console. */
const ALPHABET = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

/** 20 characters from 55 symbols: about 115 bits of entropy, drawn without modulo bias. */
export const generatePassword: Effect.Effect<Redacted.Redacted<string>, never, SecureRandom.SecureRandom> = Effect.gen(
  function*() {
    const random = yield* SecureRandom.SecureRandom
    let password = ""
    for (let i = 0; i < 20; i++) password += ALPHABET[yield* random.intBetween(0, ALPHABET.length, { halfOpen: true })]
    return Redacted.make(password)
  }
)
