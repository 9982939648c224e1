// Specification of sealed upstream credentials (domain/secrets/UpstreamCredentials.ts) on the in-memory store
// and the real AES-GCM SecretBox: a value opens only under its own name and only unaltered.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { listSecrets, readSecret, storeSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"

const world = Layer.merge(
  MemoryUpstreamSecrets.layer,
  AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(0x5c)), previous: [] })
)

const value = Redacted.make("pve-api-token=0f1e2d3c")

const stored = (name: string) =>
  Effect.flatMap(UpstreamSecrets, (secrets) => Effect.map(secrets.get(name), (found) => Option.getOrThrow(found)))

/** Overwrites the stored sealed value of `name` as someone with database access could. */
const overwrite = (name: string, sealed: string) =>
  Effect.flatMap(UpstreamSecrets, (secrets) => secrets.put(name, sealed, new Date(0)))

/** Flips one bit of the decoded body, keeping the version and key id. */
const flipBit = (sealed: string, at: (length: number) => number) => {
  const [version, keyId, body] = sealed.split(":")
  const raw = Buffer.from(body ?? "", "base64")
  const index = at(raw.length)
  raw[index] = (raw[index] ?? 0) ^ 0x01
  return `${version}:${keyId}:${raw.toString("base64")}`
}

describe("UpstreamCredentials", () => {
  it.effect("a stored secret reads back as the same value, sealed at rest", () =>
    Effect.gen(function*() {
      yield* storeSecret("proxmox:pve", value)
      const opened = yield* readSecret("proxmox:pve")
      assert.strictEqual(Redacted.value(opened), Redacted.value(value))
      const atRest = yield* stored("proxmox:pve")
      assert.isTrue(atRest.sealed.startsWith("v1:"))
      assert.notInclude(atRest.sealed, Redacted.value(value))
    }).pipe(Effect.provide(world)))

  it.effect("storing a name again replaces its value", () =>
    Effect.gen(function*() {
      yield* storeSecret("proxmox:pve", value)
      yield* storeSecret("proxmox:pve", Redacted.make("rotated-password"))
      assert.strictEqual(Redacted.value(yield* readSecret("proxmox:pve")), "rotated-password")
      assert.deepStrictEqual((yield* listSecrets).map((s) => s.name), ["proxmox:pve"])
    }).pipe(Effect.provide(world)))

  it.effect("a sealed value copied under another name does not open (TAMPERED)", () =>
    Effect.gen(function*() {
      yield* storeSecret("proxmox:pve", value)
      yield* storeSecret("proxmox:backup", Redacted.make("backup-password"))
      yield* overwrite("proxmox:backup", (yield* stored("proxmox:pve")).sealed)
      const error = yield* Effect.flip(readSecret("proxmox:backup"))
      assert.strictEqual(error._tag, "SecretUnreadable")
      if (error._tag === "SecretUnreadable") assert.strictEqual(error.reason, "TAMPERED")
      assert.strictEqual(Redacted.value(yield* readSecret("proxmox:pve")), Redacted.value(value))
    }).pipe(Effect.provide(world)))

  for (const [part, at] of [
    ["nonce", () => 0],
    ["ciphertext", () => 12],
    ["authentication tag", (length: number) => length - 1]
  ] as const) {
    it.effect(`a stored value with an altered ${part} does not open (TAMPERED)`, () =>
      Effect.gen(function*() {
        yield* storeSecret("pterodactyl:panel", value)
        yield* overwrite("pterodactyl:panel", flipBit((yield* stored("pterodactyl:panel")).sealed, at))
        const error = yield* Effect.flip(readSecret("pterodactyl:panel"))
        assert.strictEqual(error._tag, "SecretUnreadable")
        if (error._tag === "SecretUnreadable") assert.strictEqual(error.reason, "TAMPERED")
      }).pipe(Effect.provide(world)))
  }

  it.effect("reading a name never stored fails with SecretNotFound naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(readSecret("proxmox:unknown"))
      assert.strictEqual(error._tag, "SecretNotFound")
      if (error._tag === "SecretNotFound") assert.strictEqual(error.name, "proxmox:unknown")
    }).pipe(Effect.provide(world)))

  it.effect("an invalid name is refused before anything is stored", () =>
    Effect.gen(function*() {
      for (const name of ["", "has space", "-leading-dash", "x".repeat(101), "path/like"]) {
        const error = yield* Effect.flip(storeSecret(name, value))
        assert.strictEqual(error._tag, "InvalidSecretName")
      }
      assert.deepStrictEqual(yield* listSecrets, [])
    }).pipe(Effect.provide(world)))
})
