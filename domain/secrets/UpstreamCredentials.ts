// Upstream credentials at rest: sealed by SecretBox, bound to their name, re-sealable under a new key.
import { Clock, Effect, Option, Redacted, Schema } from "effect"
import { SecretBox } from "../../ports/SecretBox.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"

export class InvalidSecretName extends Schema.TaggedError<InvalidSecretName>()("InvalidSecretName", { name: Schema.String }) {
  override get message() {
    return `"${this.name}" is not a valid secret name (letters, digits, . _ : -; at most 100 characters)`
  }
}

export class SecretNotFound extends Schema.TaggedError<SecretNotFound>()("SecretNotFound", { name: Schema.String }) {
  override get message() {
    return `No secret named "${this.name}"`
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/

/** The additional authenticated data: a sealed value copied under another name no longer opens. */
export const ownerOf = (name: string) => `upstream-secret:${name}`

export class EmptySecret extends Schema.TaggedError<EmptySecret>()("EmptySecret", { name: Schema.String }) {
  override get message() {
    return `Refusing to store an empty value for "${this.name}"`
  }
}

export const validName = (name: string) =>
  NAME.test(name) ? Effect.succeed(name) : Effect.fail(new InvalidSecretName({ name }))

export const storeSecret = Effect.fn("storeSecret")(function*(name: string, value: Redacted.Redacted<string>) {
  yield* validName(name)
  if (Redacted.value(value) === "") return yield* new EmptySecret({ name })
  const sealed = yield* (yield* SecretBox).seal(value, ownerOf(name))
  yield* (yield* UpstreamSecrets).put(name, sealed, new Date(yield* Clock.currentTimeMillis))
})

export const readSecret = Effect.fn("readSecret")(function*(name: string) {
  const stored = yield* (yield* UpstreamSecrets).get(name)
  if (Option.isNone(stored)) return yield* new SecretNotFound({ name })
  return yield* (yield* SecretBox).open(stored.value.sealed, ownerOf(name))
})

export const listSecrets = Effect.flatMap(UpstreamSecrets, (secrets) => secrets.list)

export const removeSecret = Effect.fn("removeSecret")(function*(name: string) {
  if (!(yield* (yield* UpstreamSecrets).remove(name))) return yield* new SecretNotFound({ name })
})

/**
 * Re-seals every secret not sealed under the current key (after ENCRYPTION_KEY changed and the old key moved
 * to ENCRYPTION_KEYS_PREVIOUS). Returns how many were re-sealed. A secret that no key opens stops the rotation.
 */
export const rotateSecrets = Effect.gen(function*() {
  const box = yield* SecretBox
  const secrets = yield* UpstreamSecrets
  let resealed = 0
  for (const stored of yield* secrets.all) {
    if (box.keyIdOf(stored.sealed) === box.currentKeyId) continue
    const value = yield* box.open(stored.sealed, ownerOf(stored.name))
    yield* secrets.put(stored.name, yield* box.seal(value, ownerOf(stored.name)), new Date(yield* Clock.currentTimeMillis))
    resealed++
  }
  return resealed
})
