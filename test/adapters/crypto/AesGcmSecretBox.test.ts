// Specification of the AES-256-GCM SecretBox: sealed format, tamper and swap detection, key rotation, key parsing.
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Result } from "effect"
import { make, parseEncryptionKey } from "../../../adapters/crypto/AesGcmSecretBox.ts"
import type { SecretBox } from "../../../ports/SecretBox.ts"

const newKey = () => Redacted.make(new Uint8Array(randomBytes(32)))
const boxWith = (current: Redacted.Redacted<Uint8Array>, ...previous: Array<Redacted.Redacted<Uint8Array>>) =>
  make({ current, previous })

const secret = Redacted.make("pve-api-token=0f1e2d3c")
const owner = "proxmox:pve"

const openReason = (box: SecretBox["Service"], sealed: string, as: string = owner) =>
  Effect.map(Effect.flip(box.open(sealed, as)), (e) => e.reason)

/** Replaces one byte of the decoded body, leaving the prefix alone. */
const flipByteAt = (sealed: string, index: (length: number) => number): string => {
  const [version, keyId, body] = sealed.split(":")
  const raw = Buffer.from(body ?? "", "base64")
  const at = index(raw.length)
  raw[at] = (raw[at] ?? 0) ^ 0x01
  return `${version}:${keyId}:${raw.toString("base64")}`
}

describe("AesGcmSecretBox", () => {
  it.effect("opens what it sealed, for the same owner", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const sealed = yield* box.seal(secret, owner)
      assert.match(sealed, new RegExp(`^v1:${box.currentKeyId}:[A-Za-z0-9+/]+=*$`))
      assert.notInclude(sealed, Redacted.value(secret))
      const opened = yield* box.open(sealed, owner)
      assert.strictEqual(Redacted.value(opened), Redacted.value(secret))
    }))

  it.effect("round-trips an empty and a non-ASCII secret", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      for (const text of ["", "pässwörd ✓ 🔑"]) {
        const opened = yield* box.open(yield* box.seal(Redacted.make(text), owner), owner)
        assert.strictEqual(Redacted.value(opened), text)
      }
    }))

  it.effect("two seals of the same secret differ (fresh nonce each time)", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const a = yield* box.seal(secret, owner)
      const b = yield* box.seal(secret, owner)
      assert.notStrictEqual(a, b)
      assert.notStrictEqual(Buffer.from(a.split(":")[2] ?? "", "base64").subarray(0, 12).toString("hex"),
        Buffer.from(b.split(":")[2] ?? "", "base64").subarray(0, 12).toString("hex"))
    }))

  it.effect("altering any byte of nonce, ciphertext or tag reads as TAMPERED", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const sealed = yield* box.seal(secret, owner)
      const length = Buffer.from(sealed.split(":")[2] ?? "", "base64").length
      for (let i = 0; i < length; i++) {
        assert.strictEqual(yield* openReason(box, flipByteAt(sealed, () => i)), "TAMPERED", `byte ${i}`)
      }
    }))

  it.effect("a value sealed under a key the box does not hold is UNKNOWN_KEY", () =>
    Effect.gen(function*() {
      const sealed = yield* boxWith(newKey()).seal(secret, owner)
      assert.strictEqual(yield* openReason(boxWith(newKey()), sealed), "UNKNOWN_KEY")
    }))

  it.effect("a wrong key presented under the right key id reads as TAMPERED", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const foreign = yield* boxWith(newKey()).seal(secret, owner)
      const forged = foreign.replace(/^v1:[0-9a-f]{8}:/, `v1:${box.currentKeyId}:`)
      assert.strictEqual(yield* openReason(box, forged), "TAMPERED")
    }))

  it.effect("a value moved to another record does not open (owner is authenticated)", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const sealed = yield* box.seal(secret, "proxmox:pve")
      assert.strictEqual(yield* openReason(box, sealed, "proxmox:other"), "TAMPERED")
    }))

  it.effect("after rotation, values sealed under the previous key still open and are known to need re-sealing", () =>
    Effect.gen(function*() {
      const oldKey = newKey()
      const before = boxWith(oldKey)
      const sealedBefore = yield* before.seal(secret, owner)

      const after = boxWith(newKey(), oldKey)
      assert.notStrictEqual(after.currentKeyId, before.currentKeyId)
      assert.strictEqual(after.keyIdOf(sealedBefore), before.currentKeyId)
      assert.notStrictEqual(after.keyIdOf(sealedBefore), after.currentKeyId)
      assert.strictEqual(Redacted.value(yield* after.open(sealedBefore, owner)), Redacted.value(secret))

      const resealed = yield* after.seal(secret, owner)
      assert.strictEqual(after.keyIdOf(resealed), after.currentKeyId)
    }))

  it.effect("the key id is the first 8 hex chars of SHA-256 of the key, stable across instances", () =>
    Effect.gen(function*() {
      const bytes = new Uint8Array(32)
      const box = boxWith(Redacted.make(bytes))
      // sha256 of 32 zero bytes: 66687aad f862bd77 …
      assert.strictEqual(box.currentKeyId, "66687aad")
      assert.strictEqual(boxWith(Redacted.make(new Uint8Array(32))).currentKeyId, box.currentKeyId)
    }))

  it.effect("malformed values are MALFORMED, and keyIdOf gives nothing for them", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const id = box.currentKeyId
      const shortBody = Buffer.alloc(27).toString("base64")
      const malformed = [
        "",
        "plaintext-password",
        `v2:${id}:${Buffer.alloc(40).toString("base64")}`,
        `v1:${id}`,
        `v1:${id}:`,
        `v1:XYZ:${Buffer.alloc(40).toString("base64")}`,
        `v1:${id}:not base64!`,
        `v1:${id}:${Buffer.alloc(40).toString("base64")}:extra`,
        `v1:${id}:${shortBody}`
      ]
      for (const value of malformed) {
        assert.strictEqual(yield* openReason(box, value), "MALFORMED", JSON.stringify(value))
        assert.isUndefined(box.keyIdOf(value))
      }
    }))

  it.effect("errors carry only the reason, never the secret", () =>
    Effect.gen(function*() {
      const box = boxWith(newKey())
      const sealed = yield* box.seal(secret, owner)
      const error = yield* Effect.flip(box.open(sealed, "proxmox:other"))
      assert.notInclude(JSON.stringify(error), Redacted.value(secret))
      assert.notInclude(String(error), Redacted.value(secret))
    }))

  it("a key of the wrong size is refused when the box is built", () => {
    assert.throws(() => boxWith(Redacted.make(new Uint8Array(31))), /32 bytes/)
  })
})

describe("parseEncryptionKey", () => {
  const bytes = new Uint8Array(randomBytes(32))
  const hex = Buffer.from(bytes).toString("hex")
  const base64 = Buffer.from(bytes).toString("base64")
  const base64url = Buffer.from(bytes).toString("base64url")

  const accepted = (text: string) => {
    const result = parseEncryptionKey(text)
    assert.isTrue(Result.isSuccess(result), text)
    if (Result.isSuccess(result)) assert.deepStrictEqual(result.success, bytes)
  }
  const rejected = (text: string) => {
    const result = parseEncryptionKey(text)
    assert.isTrue(Result.isFailure(result), text)
    if (Result.isFailure(result)) {
      assert.include(result.failure, "must be 32 bytes, base64 or hex")
      if (text.length > 0) assert.notInclude(result.failure, text)
    }
  }

  it("accepts 32 bytes as hex (either case), base64 and url-safe base64, padded or not", () => {
    accepted(hex)
    accepted(hex.toUpperCase())
    accepted(base64)
    accepted(base64.replace(/=$/, ""))
    accepted(base64url)
    accepted(`${base64url}=`)
    accepted(`  ${base64}\n`)
  })

  it("rejects 31 and 33 bytes in every encoding", () => {
    for (const size of [31, 33]) {
      const other = randomBytes(size)
      rejected(other.toString("hex"))
      rejected(other.toString("base64"))
      rejected(other.toString("base64url"))
    }
  })

  it("rejects junk and empty text", () => {
    rejected("")
    rejected("correct horse battery staple")
    rejected(`${hex.slice(0, 63)}g`)
    rejected(`${base64.slice(0, 42)}!=`)
  })

  it("says how many bytes a wrong-size key has", () => {
    const result = parseEncryptionKey(randomBytes(31).toString("hex"))
    assert.isTrue(Result.isFailure(result) && result.failure.includes("31 bytes"))
  })
})
