// The admin CLI: each command in-process on fakes (the real AES-GCM SecretBox), and `node app/cli.ts` beside a
// running server, sharing the embedded database it serves.
import { NodeServices } from "@effect/platform-node"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Command } from "effect/cli"
import { TestClock, TestConsole } from "effect/testing"
import { randomBytes } from "node:crypto"
import { expect } from "vitest"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { ownerOf, readSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { Outbox } from "../../ports/Outbox.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"
import { cleanUp, lines, migratedDataDir, run, startServer, stop } from "./processes.ts"

const keyA = Redacted.make(new Uint8Array(32).fill(0xa1))
const keyB = Redacted.make(new Uint8Array(32).fill(0xb2))
const plaintext = "pve-root-password-4f9c"
const now = new Date("2026-03-02T09:00:00.000Z")

type Stores = { readonly secrets: UpstreamSecrets["Service"]; readonly outbox: Outbox["Service"] }

const makeStores = Effect.gen(function*() {
  return { secrets: yield* MemoryUpstreamSecrets.make, outbox: yield* MemoryOutbox.make } satisfies Stores
})

/** The admin command over shared stores (they outlive each run), a SecretBox on `keys`, and a fixed input. */
const admin = (stores: Stores, keys: AesGcmSecretBox.EncryptionKeys, input: string = plaintext) => {
  const services = Layer.mergeAll(
    Layer.succeed(UpstreamSecrets, stores.secrets),
    Layer.succeed(Outbox, stores.outbox),
    AesGcmSecretBox.layer(keys),
    Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make(input)) })
  )
  const migrate = Effect.succeed<ReadonlyArray<readonly [number, string]>>([[1, "accounts"], [2, "secrets_outbox"]])
  return Command.runWith(makeAdmin(services, migrate), { version: "test" })
}

const onlyA = { current: keyA, previous: [] }

/** The stored (sealed) value of `name`, read straight from the store. */
const storedValue = (stores: Stores, name: string) =>
  Effect.map(stores.secrets.get(name), (found) => Option.getOrThrow(found).sealed)

/** Opens `name` through the domain with a SecretBox on `keys`. */
const open = (stores: Stores, name: string, keys: AesGcmSecretBox.EncryptionKeys) =>
  readSecret(name).pipe(
    Effect.map(Redacted.value),
    Effect.provideService(UpstreamSecrets, stores.secrets),
    Effect.provideService(SecretBox, AesGcmSecretBox.make(keys))
  )

const inCli = <A, E>(effect: Effect.Effect<A, E, NodeServices.NodeServices | TestConsole.TestConsole>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now.getTime())
    return yield* effect
  }).pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer)))

const printed = Effect.map(TestConsole.logLines, (all) => all.map(String).join("\n"))

describe("admin CLI, in-process", () => {
  it.effect("`secrets put` stores a sealed value that the domain opens back", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      yield* admin(stores, onlyA)(["secrets", "put", "proxmox:pve"])
      const sealed = yield* storedValue(stores, "proxmox:pve")
      assert.isTrue(sealed.startsWith("v1:"))
      assert.notInclude(sealed, plaintext)
      assert.strictEqual(yield* open(stores, "proxmox:pve", onlyA), plaintext)
      assert.include(yield* printed, `Stored secret "proxmox:pve" (sealed).`)
      assert.notInclude(yield* printed, plaintext)
    })))

  it.effect("`secrets put` refuses an empty value and stores nothing", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const error = yield* Effect.flip(admin(stores, onlyA, "")(["secrets", "put", "proxmox:pve"]))
      assert.strictEqual(error._tag, "EmptySecret")
      assert.isTrue(Option.isNone(yield* stores.secrets.get("proxmox:pve")))
    })))

  it.effect("`secrets put` with an invalid name fails with InvalidSecretName", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const error = yield* Effect.flip(admin(stores, onlyA)(["secrets", "put", "bad name/with spaces"]))
      assert.strictEqual(error._tag, "InvalidSecretName")
      assert.deepStrictEqual(yield* stores.secrets.list, [])
    })))

  it.effect("`secrets list` prints names and dates, never a value", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const run = admin(stores, onlyA)
      yield* run(["secrets", "put", "proxmox:pve"])
      yield* run(["secrets", "put", "pterodactyl:panel"])
      const before = (yield* TestConsole.logLines).length
      yield* run(["secrets", "list"])
      const output = (yield* TestConsole.logLines).slice(before).map(String).join("\n")
      assert.deepStrictEqual(lines(output), [
        `proxmox:pve\t${now.toISOString()}`,
        `pterodactyl:panel\t${now.toISOString()}`
      ])
      assert.notInclude(output, plaintext)
      assert.notInclude(output, "v1:")
    })))

  it.effect("`secrets list` says when nothing is stored", () =>
    inCli(Effect.gen(function*() {
      yield* admin(yield* makeStores, onlyA)(["secrets", "list"])
      assert.strictEqual(yield* printed, "No secrets stored.")
    })))

  it.effect("`secrets remove` removes once; removing again fails with SecretNotFound", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const run = admin(stores, onlyA)
      yield* run(["secrets", "put", "proxmox:pve"])
      yield* run(["secrets", "remove", "proxmox:pve"])
      assert.isTrue(Option.isNone(yield* stores.secrets.get("proxmox:pve")))
      assert.include(yield* printed, `Removed secret "proxmox:pve".`)
      const error = yield* Effect.flip(run(["secrets", "remove", "proxmox:pve"]))
      assert.strictEqual(error._tag, "SecretNotFound")
    })))

  it.effect("`secrets rotate` re-seals under the new key, so the old key can be dropped", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      yield* admin(stores, onlyA)(["secrets", "put", "proxmox:pve"])
      const boxA = AesGcmSecretBox.make(onlyA)
      const boxB = AesGcmSecretBox.make({ current: keyB, previous: [] })
      assert.strictEqual(boxA.keyIdOf(yield* storedValue(stores, "proxmox:pve")), boxA.currentKeyId)

      yield* admin(stores, { current: keyB, previous: [keyA] })(["secrets", "rotate"])
      const resealed = yield* storedValue(stores, "proxmox:pve")
      assert.strictEqual(boxB.keyIdOf(resealed), boxB.currentKeyId)
      assert.notStrictEqual(boxB.currentKeyId, boxA.currentKeyId)
      assert.include(yield* printed, "Re-sealed 1 secret(s) under the current key.")
      assert.strictEqual(yield* open(stores, "proxmox:pve", { current: keyB, previous: [] }), plaintext)
      const stale = yield* Effect.flip(boxA.open(resealed, ownerOf("proxmox:pve")))
      assert.strictEqual(stale.reason, "UNKNOWN_KEY")
    })))

  it.effect("`outbox` prints the newest messages first, up to --limit", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      for (const n of [1, 2, 3]) {
        yield* stores.outbox.append(
          { to: `user${n}@example.com`, subject: `Subject ${n}`, text: `Body ${n}`, html: `<p>Body ${n}</p>` },
          new Date(now.getTime() + n * 60_000),
          50
        )
      }
      yield* admin(stores, onlyA)(["outbox", "--limit", "2"])
      const output = yield* printed
      assert.match(output, /#3 {2}2026-03-02T09:03:00.000Z {2}to user3@example.com\nSubject: Subject 3\n\nBody 3/)
      assert.isBelow(output.indexOf("Subject 3"), output.indexOf("Subject 2"))
      assert.notInclude(output, "Subject 1")
      assert.notInclude(output, "<p>")
    })))

  it.effect("`outbox` says when it is empty", () =>
    inCli(Effect.gen(function*() {
      yield* admin(yield* makeStores, onlyA)(["outbox"])
      assert.strictEqual(yield* printed, "The outbox is empty.")
    })))

  it.effect("`migrate` prints the migrations it applied", () =>
    inCli(Effect.gen(function*() {
      yield* admin(yield* makeStores, onlyA)(["migrate"])
      assert.deepStrictEqual(lines(yield* printed), ["applied migration 1_accounts", "applied migration 2_secrets_outbox"])
    })))
})

describe("admin CLI, as a process", () => {
  afterEach(cleanUp)

  it("stores and lists a secret in the embedded database the server holds", async () => {
    const dataDir = await migratedDataDir("cli")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir }
    const server = await startServer(env)
    const value = randomBytes(12).toString("hex")

    const put = await run("app/cli.ts", ["secrets", "put", "x"], env, { input: value })
    expect(put.code, put.stderr).toBe(0)
    expect(put.stdout).toContain(`Stored secret "x" (sealed).`)

    const listed = await run("app/cli.ts", ["secrets", "list"], env)
    expect(listed.code, listed.stderr).toBe(0)
    // The server registered its sandbox cluster's credential beside ours.
    expect(lines(listed.stdout).map((line) => line.split("\t")[0])).toContain("x")
    expect(listed.stdout + listed.stderr + put.stdout + put.stderr).not.toContain(value)

    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    await stop(server)
  }, 240_000)

  it("refusing to store an empty value exits non-zero, so scripts notice", async () => {
    const env = { NODE_ENV: "development", DATA_DIR: await migratedDataDir("cli-empty") }
    const put = await run("app/cli.ts", ["secrets", "put", "x"], env, { input: "" })
    expect(put.stderr).toContain("Refusing to store an empty value")
    expect(put.code).toBe(1)
  }, 240_000)
})
