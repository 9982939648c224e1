// Builds catalog files and the in-memory world they are applied to: the file of API.md, changed where a test says.
import { Effect, Layer, Redacted } from "effect"
import * as AesGcmSecretBox from "../../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryCatalog from "../../../adapters/fake/MemoryCatalog.ts"
import * as MemoryIpAddresses from "../../../adapters/fake/MemoryIpAddresses.ts"
import * as MemoryUpstreamSecrets from "../../../adapters/fake/MemoryUpstreamSecrets.ts"
import { type CatalogInvalid, decodeCatalogFile } from "../../../domain/catalog/CatalogFile.ts"
import { loadCatalog, type ReadFile } from "../../../domain/catalog/CatalogSpec.ts"
import { applyCatalog } from "../../../domain/catalog/applyCatalog.ts"
import { dieOnDatabaseOutage } from "../../../domain/ops/dieOnDatabaseOutage.ts"
import type { DatabaseUnavailable } from "../../../ports/DatabaseUnavailable.ts"

export type Json = Record<string, unknown>

export const PVE_PASSWORD = "pve-root-password-7f3a"
export const TOKEN_SECRET = "5d8c2f0e-token-secret"
export const APPLICATION_KEY = "ptla_application_key_0123456789"
export const CLIENT_KEY = "ptlc_client_key_0123456789"

export const cluster = (overrides: Json = {}): Json => ({
  name: "pve",
  url: "https://pve.example:8006",
  username: "root@pam",
  password: PVE_PASSWORD,
  tokenId: null,
  tokenSecret: null,
  tls: { caFile: null, fingerprint: null, insecure: false },
  ...overrides
})

export const template = (overrides: Json = {}): Json => ({ id: "debian-12", cluster: "pve", node: "pve1", vmid: 9000, name: "Debian 12", ...overrides })

export const ipPool = (overrides: Json = {}): Json => ({
  id: "public-1", cluster: "pve", cidr: "203.0.113.0/28", gateway: "203.0.113.1", bridge: "vmbr0", nodes: ["pve1"], ...overrides
})

export const panel = (overrides: Json = {}): Json => ({
  name: "panel", url: "https://panel.example", applicationKey: APPLICATION_KEY, clientKey: CLIENT_KEY, ...overrides
})

export const vpsPlan = (overrides: Json = {}): Json => ({
  id: "vps-s", kind: "vps", name: "VPS S", priceCents: 500, vcpu: 1, ramMiB: 1024, diskGiB: 20, templates: ["debian-12"], snapshotLimit: 2,
  ...overrides
})

export const gamePlan = (overrides: Json = {}): Json => ({
  id: "mc-2g", kind: "game", name: "Minecraft 2 GB", priceCents: 600, panel: "panel", eggId: 5,
  dockerImage: "ghcr.io/pterodactyl/yolks:java_17", memoryMiB: 2048, diskMiB: 10240, cpuPercent: 200, io: 500,
  databases: 0, backups: 2, allocations: 1, environment: { SERVER_JARFILE: "server.jar" }, userVariables: ["MINECRAFT_VERSION"],
  ...overrides
})

/** The catalog file of API.md; sections given replace the example's. */
export const catalogFile = (sections: Json = {}): Json => ({
  proxmox: [cluster()],
  templates: [template()],
  ipPools: [ipPool()],
  pterodactyl: [panel()],
  plans: [vpsPlan(), gamePlan()],
  ...sections
})

/** A file reader over a fixed set of files; anything else is missing, as ENOENT would say. */
export const files = (contents: Record<string, string>): ReadFile => (path) =>
  path in contents
    ? Effect.succeed(contents[path] ?? "")
    : Effect.fail({ message: `ENOENT: no such file or directory, open '${path}'` })

export const noFiles = files({})

/** Decodes and loads a file given as JSON, reading CA files through `read`. */
export const load = (file: Json, read: ReadFile = noFiles) =>
  Effect.flatMap(decodeCatalogFile(JSON.stringify(file)), (decoded) => loadCatalog(decoded, read))

/** Loads and applies a file given as JSON. */
export const apply = (file: Json, read: ReadFile = noFiles) => Effect.flatMap(load(file, read), applyCatalog)

/** The problems a file is refused for (fails the test if it is accepted). */
export const problemsOf = <R>(effect: Effect.Effect<unknown, CatalogInvalid | DatabaseUnavailable, R>) =>
  Effect.map(Effect.flip(dieOnDatabaseOutage(effect)), (e) => e.problems)

export const encryptionKeys = { current: Redacted.make(new Uint8Array(32).fill(0x5c)), previous: [] }

/** Fresh in-memory catalog, addresses and secrets, with the real AES-GCM SecretBox. */
export const catalogEnv = () =>
  Layer.mergeAll(
    MemoryIpAddresses.layer.pipe(Layer.provideMerge(MemoryCatalog.layer)),
    MemoryUpstreamSecrets.layer,
    AesGcmSecretBox.layer(encryptionKeys)
  )

export const PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ7\n-----END CERTIFICATE-----\n"

