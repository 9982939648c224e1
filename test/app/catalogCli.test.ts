// `catalog apply | list | retire`: in-process on fakes (the real AES-GCM SecretBox, real files in a temp folder),
// and `node app/cli.ts catalog …` as a process on the embedded database.
import { NodeServices } from "@effect/platform-node"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { expect } from "vitest"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryCatalog from "../../adapters/fake/MemoryCatalog.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { readSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { Outbox } from "../../ports/Outbox.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"
import {
  APPLICATION_KEY,
  catalogFile,
  CLIENT_KEY,
  cluster,
  encryptionKeys,
  type Json,
  PEM,
  PVE_PASSWORD,
  vpsPlan
} from "../domain/catalog/catalogMother.ts"
import { cleanUp, lines, migratedDataDir, run, tempDir } from "./processes.ts"

afterEach(cleanUp)

const makeStores = Effect.gen(function*() {
  return { secrets: yield* MemoryUpstreamSecrets.make, outbox: yield* MemoryOutbox.make, catalog: yield* MemoryCatalog.make }
})
type Stores = Effect.Success<typeof makeStores>

/** The admin command over stores that outlive each run. */
const admin = (stores: Stores) => {
  const services = Layer.mergeAll(
    Layer.succeed(UpstreamSecrets, stores.secrets),
    Layer.succeed(Outbox, stores.outbox),
    AesGcmSecretBox.layer(encryptionKeys),
    Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make("unused")) })
  )
  const migrate = Effect.succeed<ReadonlyArray<readonly [number, string]>>([])
  return Command.runWith(makeAdmin(services, migrate, Layer.succeed(Catalog, stores.catalog)), { version: "test" })
}

/** Writes `file` as catalog.json in a fresh folder, with its CA beside it in certs/; returns the catalog's path. */
const writeCatalog = (file: Json) =>
  Effect.promise(async () => {
    const dir = await tempDir("catalog")
    await mkdir(join(dir, "certs"))
    await writeFile(join(dir, "certs", "pve-ca.pem"), PEM)
    await writeFile(join(dir, "catalog.json"), JSON.stringify(file))
    return join(dir, "catalog.json")
  })

const withCa = catalogFile({ proxmox: [cluster({ tls: { caFile: "certs/pve-ca.pem", fingerprint: null, insecure: false } })] })

const inCli = <A, E>(effect: Effect.Effect<A, E, NodeServices.NodeServices | TestConsole.TestConsole>) =>
  effect.pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer)))

/** What the runs printed since `from` lines. */
const printedSince = (from: number) => Effect.map(TestConsole.logLines, (all) => all.slice(from).map(String))
const printed = printedSince(0)

describe("`catalog` commands, in-process", () => {
  it.effect("`catalog apply FILE` applies the file with its CA file beside it and prints the summary", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const path = yield* writeCatalog(withCa)
      yield* admin(stores)(["catalog", "apply", path])
      assert.deepStrictEqual(yield* printed, [
        "Proxmox clusters: 1 created, 0 updated, 0 unchanged",
        "Pterodactyl panels: 1 created, 0 updated, 0 unchanged",
        "OS templates: 1 created, 0 updated, 0 unchanged",
        "IP pools: 1 created, 0 updated, 0 unchanged",
        "plans: 2 created, 0 updated, 0 unchanged"
      ])
      const pve = yield* stores.catalog.cluster("pve")
      assert.strictEqual(pve._tag === "Some" ? pve.value.tls.ca : null, PEM.trim())
      const password = yield* readSecret("proxmox:pve:password").pipe(
        Effect.provideService(UpstreamSecrets, stores.secrets),
        Effect.provideService(SecretBox, AesGcmSecretBox.make(encryptionKeys))
      )
      assert.strictEqual(Redacted.value(password), PVE_PASSWORD)
    })))

  it.effect("`apply FILE` (as API.md writes it) does the same as `catalog apply FILE`", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      yield* admin(stores)(["apply", yield* writeCatalog(withCa)])
      assert.include((yield* printed).join("\n"), "plans: 2 created")
      assert.isTrue((yield* stores.catalog.cluster("pve"))._tag === "Some")
    })))

  it.effect("`catalog apply` of an invalid file fails naming the entry, and stores nothing", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const path = yield* writeCatalog(catalogFile({ plans: [vpsPlan({ templates: ["debian-13"] })] }))
      const error = yield* Effect.flip(admin(stores)(["catalog", "apply", path]))
      assert.strictEqual(error._tag, "CatalogInvalid")
      assert.include(error.message, `plans[0].templates: unknown template "debian-13"`)
      assert.deepStrictEqual(yield* stores.catalog.clusters, [])
    })))

  it.effect("`catalog list` shows every kind of entry and pool usage, never a credential", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const run = admin(stores)
      yield* run(["catalog", "apply", yield* writeCatalog(withCa)])
      const before = (yield* TestConsole.logLines).length
      yield* run(["catalog", "list"])
      const output = yield* printedSince(before)
      assert.deepStrictEqual(output, [
        "Plans",
        `  mc-2g  game  "Minecraft 2 GB"  6.00 €/month  2048 MiB RAM, 10240 MiB disk, 200% CPU; panel panel, egg 5`,
        `  vps-s  vps  "VPS S"  5.00 €/month  1 vCPU, 1024 MiB RAM, 20 GiB disk, 2 snapshots; templates debian-12`,
        "OS templates",
        `  debian-12  "Debian 12"  pve/pve1  vmid 9000`,
        "IP pools",
        "  public-1  pve  203.0.113.0/28  gateway 203.0.113.1  vmbr0  nodes pve1  free 13, assigned 0",
        "Proxmox clusters",
        "  pve  https://pve.example:8006  password root@pam  tls: own CA",
        "Pterodactyl panels",
        "  panel  https://panel.example"
      ])
      for (const secret of [PVE_PASSWORD, APPLICATION_KEY, CLIENT_KEY, "v1:", "BEGIN CERTIFICATE"]) {
        assert.notInclude(output.join("\n"), secret)
      }
    })))

  it.effect("`catalog retire KIND ID` retires the entry; an unknown one fails with CatalogEntryUnknown", () =>
    inCli(Effect.gen(function*() {
      const stores = yield* makeStores
      const run = admin(stores)
      yield* run(["catalog", "apply", yield* writeCatalog(withCa)])
      yield* run(["catalog", "retire", "plan", "vps-s"])
      assert.include((yield* printed).join("\n"), `Retired plan "vps-s"`)
      assert.deepStrictEqual((yield* stores.catalog.plans).map((p) => p.id), ["mc-2g"])
      const error = yield* Effect.flip(run(["catalog", "retire", "ipPool", "public-9"]))
      assert.deepStrictEqual([error._tag, error.message], ["CatalogEntryUnknown", `No ipPool "public-9" in the catalog`])
    })))
})

describe("`catalog` commands, as a process", () => {
  it("applies a file to the embedded database and lists it back", async () => {
    const dataDir = await migratedDataDir("catalog-cli")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir }
    const path = await Effect.runPromise(writeCatalog(withCa))

    const applied = await run("app/cli.ts", ["catalog", "apply", path], env, { ms: 60_000 })
    expect(applied.code, applied.stderr).toBe(0)
    expect(lines(applied.stdout)).toContain("plans: 2 created, 0 updated, 0 unchanged")

    const listed = await run("app/cli.ts", ["catalog", "list"], env, { ms: 60_000 })
    expect(listed.code, listed.stderr).toBe(0)
    expect(lines(listed.stdout)).toContain("  public-1  pve  203.0.113.0/28  gateway 203.0.113.1  vmbr0  nodes pve1  free 13, assigned 0")
    expect(applied.stdout + listed.stdout + listed.stderr).not.toContain(PVE_PASSWORD)
  }, 120_000)
})
