// SecretBox over AES-256-GCM (node:crypto): the sealed format `v1:<keyId>:<base64(nonce | ciphertext | tag)>`,
// key rotation by key id, and the parsing of the configured ENCRYPTION_KEY.
import { createCipheriv, createDecipheriv, createHash, createSecretKey, type KeyObject, randomBytes } from "node:crypto"
import { Effect, Layer, Redacted, Result } from "effect"
import { SecretBox, SecretUnreadable } from "../../ports/SecretBox.ts"

const KEY_BYTES = 32
// 96-bit nonces are the size GCM is specified for (NIST SP 800-38D); random ones are safe for far more seals than we make.
const NONCE_BYTES = 12
const TAG_BYTES = 16
const VERSION = "v1"
const KEY_ID = /^[0-9a-f]{8}$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

export interface EncryptionKeys {
  readonly current: Redacted.Redacted<Uint8Array>
  readonly previous: ReadonlyArray<Redacted.Redacted<Uint8Array>>
}

interface Key {
  readonly id: string
  readonly secret: KeyObject
}

/** First 8 hex chars of SHA-256 of the raw key: names the key in sealed values without revealing it. */
const keyIdOfBytes = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex").slice(0, 8)

const toKey = (redacted: Redacted.Redacted<Uint8Array>): Key => {
  const bytes = Redacted.value(redacted)
  if (bytes.length !== KEY_BYTES) {
    throw new Error(`encryption key must be ${KEY_BYTES} bytes, got ${bytes.length}`)
  }
  return { id: keyIdOfBytes(bytes), secret: createSecretKey(bytes) }
}

interface Sealed {
  readonly keyId: string
  readonly nonce: Buffer
  readonly ciphertext: Buffer
  readonly tag: Buffer
}

const parseSealed = (sealed: string): Sealed | undefined => {
  const parts = sealed.split(":")
  if (parts.length !== 3) return undefined
  const [version, keyId, body] = parts
  if (version !== VERSION || keyId === undefined || !KEY_ID.test(keyId) || body === undefined || !BASE64.test(body)) {
    return undefined
  }
  const raw = Buffer.from(body, "base64")
  if (raw.length < NONCE_BYTES + TAG_BYTES) return undefined
  return {
    keyId,
    nonce: raw.subarray(0, NONCE_BYTES),
    ciphertext: raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES),
    tag: raw.subarray(raw.length - TAG_BYTES)
  }
}

const encrypt = (key: Key, plaintext: string, owner: string): string => {
  const nonce = randomBytes(NONCE_BYTES)
  const cipher = createCipheriv("aes-256-gcm", key.secret, nonce, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(owner, "utf8"))
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  const body = Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]).toString("base64")
  return `${VERSION}:${key.id}:${body}`
}

/** `undefined` when the tag does not verify: wrong key, wrong owner, or altered bytes look the same by design. */
const decrypt = (key: Key, sealed: Sealed, owner: string): string | undefined => {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.secret, sealed.nonce, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(owner, "utf8"))
    decipher.setAuthTag(sealed.tag)
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

const unreadable = (reason: SecretUnreadable["reason"]) => new SecretUnreadable({ reason })

/** Throws if a key is not 32 bytes. */
export const make = (keys: EncryptionKeys): SecretBox["Service"] => {
  const current = toKey(keys.current)
  const all = [current, ...keys.previous.map(toKey)]
  return SecretBox.of({
    currentKeyId: current.id,
    keyIdOf: (sealed) => parseSealed(sealed)?.keyId,
    seal: (plaintext, owner) => Effect.sync(() => encrypt(current, Redacted.value(plaintext), owner)),
    open: (text, owner) =>
      Effect.suspend(() => {
        const sealed = parseSealed(text)
        if (sealed === undefined) return Effect.fail(unreadable("MALFORMED"))
        // Several keys may share an 8-hex-char id (unlikely, not impossible): the one whose tag verifies wins.
        const candidates = all.filter((key) => key.id === sealed.keyId)
        if (candidates.length === 0) return Effect.fail(unreadable("UNKNOWN_KEY"))
        for (const key of candidates) {
          const plaintext = decrypt(key, sealed, owner)
          if (plaintext !== undefined) return Effect.succeed(Redacted.make(plaintext))
        }
        return Effect.fail(unreadable("TAMPERED"))
      })
  })
}

/** A key of the wrong size is a wiring bug (config validates with `parseEncryptionKey`), hence a defect. */
export const layer = (keys: EncryptionKeys): Layer.Layer<SecretBox> => Layer.sync(SecretBox, () => make(keys))

const KEY_MESSAGE = `must be ${KEY_BYTES} bytes, base64 or hex`
const HEX_KEY = new RegExp(`^[0-9a-fA-F]{${KEY_BYTES * 2}}$`)
// 32 bytes are 43 base64 characters plus one optional "=".
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/
const BASE64URL_KEY = /^[A-Za-z0-9\-_]{43}=?$/
const HEX_ANY = /^[0-9a-fA-F]+$/
const BASE64_ANY = /^[A-Za-z0-9+/\-_]+={0,2}$/

/** Decodes ENCRYPTION_KEY: exactly 32 bytes, as 64 hex chars or base64 (standard or url-safe, padding optional). */
export const parseEncryptionKey = (text: string): Result.Result<Uint8Array, string> => {
  const trimmed = text.trim()
  if (HEX_KEY.test(trimmed)) return Result.succeed(new Uint8Array(Buffer.from(trimmed, "hex")))
  if (BASE64_KEY.test(trimmed) || BASE64URL_KEY.test(trimmed)) {
    const unpadded = trimmed.replace(/=$/, "")
    const bytes = Buffer.from(unpadded, "base64url")
    // Rejects non-canonical spellings (stray low bits in the last character) so one key has one text form.
    if (bytes.length === KEY_BYTES && bytes.toString("base64url") === unpadded.replaceAll("+", "-").replaceAll("/", "_")) {
      return Result.succeed(new Uint8Array(bytes))
    }
    return Result.fail(KEY_MESSAGE)
  }
  if (HEX_ANY.test(trimmed) && trimmed.length % 2 === 0) {
    return Result.fail(`${KEY_MESSAGE} (this is ${trimmed.length / 2} bytes of hex)`)
  }
  if (BASE64_ANY.test(trimmed) && trimmed.length % 4 !== 1) {
    const size = Buffer.from(trimmed.replace(/=+$/, ""), "base64url").length
    return Result.fail(`${KEY_MESSAGE} (this is ${size} bytes of base64)`)
  }
  return Result.fail(KEY_MESSAGE)
}
