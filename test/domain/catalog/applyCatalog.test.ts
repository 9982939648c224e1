// Applying a catalog file to the in-memory stores: idempotent, credentials sealed, references checked first.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { applyCatalogFile, formatSummary } from "../../../domain/catalog/applyCatalog.ts"
import { readSecret } from "../../../domain/secrets/UpstreamCredentials.ts"
import { Catalog } from "../../../ports/Catalog.ts"
import { UpstreamSecrets } from "../../../ports/UpstreamSecrets.ts"
import {
  apply,
  APPLICATION_KEY,
  catalogEnv,
  catalogFile,
  CLIENT_KEY,
  cluster,
  files,
  gamePlan,
  ipPool,
  panel,
  PEM,
  problemsOf,
  PVE_PASSWORD,
  template,
  TOKEN_SECRET,
  vpsPlan
} from "./catalogMother.ts"

const open = (name: string) => Effect.map(readSecret(name), Redacted.value)
const sealedValues = Effect.flatMap(UpstreamSecrets, (s) => s.all)
const counts = (created: number, updated: number, unchanged: number) => ({ created, updated, unchanged })

describe("applying a catalog file", () => {
  it.effect("stores every entry, seals the credentials under their names, and says what it created", () =>
    Effect.gen(function*() {
      const summary = yield* apply(catalogFile())
      assert.deepStrictEqual(summary, {
        clusters: counts(1, 0, 0),
        panels: counts(1, 0, 0),
        templates: counts(1, 0, 0),
        ipPools: counts(1, 0, 0),
        plans: counts(2, 0, 0),
        warnings: []
      })
      assert.strictEqual(yield* open("proxmox:pve:password"), PVE_PASSWORD)
      assert.strictEqual(yield* open("pterodactyl:panel:application-key"), APPLICATION_KEY)
      assert.strictEqual(yield* open("pterodactyl:panel:client-key"), CLIENT_KEY)
      for (const s of yield* sealedValues) assert.notInclude(s.sealed, PVE_PASSWORD)
      const catalog = yield* Catalog
      assert.deepStrictEqual((yield* catalog.ipPools).map((p) => [p.id, p.free, p.assigned]), [["public-1", 13, 0]])
      assert.deepStrictEqual((yield* catalog.plans).map((p) => p.id), ["vps-s", "mc-2g"])
      assert.deepStrictEqual(Option.getOrThrow(yield* catalog.panel("panel")), { name: "panel", url: "https://panel.example", retired: false })
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("applying the same file again changes nothing, not even the sealed bytes of a credential", () =>
    Effect.gen(function*() {
      const file = catalogFile({ proxmox: [cluster({ tokenId: "api@pve!zh", tokenSecret: TOKEN_SECRET })] })
      yield* apply(file)
      const sealed = yield* sealedValues
      const again = yield* apply(file)
      assert.deepStrictEqual(again, {
        clusters: counts(0, 0, 1),
        panels: counts(0, 0, 1),
        templates: counts(0, 0, 1),
        ipPools: counts(0, 0, 1),
        plans: counts(0, 0, 2),
        warnings: []
      })
      assert.deepStrictEqual(yield* sealedValues, sealed)
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a changed credential re-seals it and counts its cluster as updated", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      const summary = yield* apply(catalogFile({ proxmox: [cluster({ password: "rotated-password" })] }))
      assert.deepStrictEqual([summary.clusters, summary.plans], [counts(0, 1, 0), counts(0, 0, 2)])
      assert.strictEqual(yield* open("proxmox:pve:password"), "rotated-password")
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("entries missing from a later file stay, and may still be referred to", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      const summary = yield* apply({ plans: [vpsPlan({ id: "vps-m", priceCents: 900, vcpu: 2 })] })
      assert.deepStrictEqual(summary.plans, counts(1, 0, 0))
      const catalog = yield* Catalog
      assert.deepStrictEqual((yield* catalog.plans).map((p) => p.id), ["vps-s", "mc-2g", "vps-m"])
      assert.deepStrictEqual((yield* catalog.clusters).map((c) => c.name), ["pve"])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a reference to nothing, in the file or the store, is refused with its entry, and nothing is written", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf(apply(catalogFile({
        templates: [template({ cluster: "pve-2" })],
        ipPools: [ipPool({ cluster: "pve-3" })],
        plans: [vpsPlan(), vpsPlan({ id: "vps-m" }), vpsPlan({ id: "vps-l", templates: ["debian-13"] }), gamePlan({ panel: "games" })]
      })))
      assert.deepStrictEqual(problems, [
        `templates[0].cluster: unknown cluster "pve-2"`,
        `ipPools[0].cluster: unknown cluster "pve-3"`,
        `plans[2].templates: unknown template "debian-13"`,
        `plans[3].panel: unknown panel "games"`
      ])
      const catalog = yield* Catalog
      assert.deepStrictEqual([yield* catalog.clusters, yield* catalog.allPlans, yield* (yield* UpstreamSecrets).list], [[], [], []])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a credential left out must already be stored (e.g. by `secrets put`), and is then kept", () =>
    Effect.gen(function*() {
      const withoutPassword = catalogFile({ proxmox: [cluster({ password: null })], pterodactyl: [panel({ clientKey: null })] })
      assert.deepStrictEqual(yield* problemsOf(apply(withoutPassword)), [
        "proxmox[0].password: required with username (or stored beforehand: secrets put proxmox:pve:password)",
        "pterodactyl[0].clientKey: required (or stored beforehand: secrets put pterodactyl:panel:client-key)"
      ])
      yield* apply(catalogFile())
      const summary = yield* apply(withoutPassword)
      assert.deepStrictEqual(summary.clusters, counts(0, 0, 1))
      assert.strictEqual(yield* open("proxmox:pve:password"), PVE_PASSWORD)
      assert.strictEqual(yield* open("pterodactyl:panel:client-key"), CLIENT_KEY)
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a plan keeps its kind, and a pool may not overlap a stored one", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      const problems = yield* problemsOf(apply({
        plans: [gamePlan({ id: "vps-s" })],
        ipPools: [ipPool({ id: "public-2", cidr: "203.0.113.8/29", gateway: "203.0.113.9" })]
      }))
      assert.deepStrictEqual(problems, [
        `ipPools[0].cidr: 203.0.113.8/29 overlaps stored pool "public-1" (203.0.113.0/28)`,
        `plans[0].kind: plan "vps-s" is a vps plan; a plan's kind cannot change (retire it, use a new id)`
      ])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a retired entry stays retired when the file lists it again; the summary warns about it", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      const catalog = yield* Catalog
      yield* catalog.retire("plan", "vps-s")
      yield* catalog.retire("template", "debian-12")
      const summary = yield* apply(catalogFile({ plans: [vpsPlan({ priceCents: 450 }), gamePlan()] }))
      assert.deepStrictEqual(summary.plans, counts(0, 1, 1))
      assert.deepStrictEqual(summary.warnings, [
        `templates[0]: template "debian-12" on pve/pve1 is retired; applying the file does not bring it back`,
        `plans[0]: plan "vps-s" is retired; applying the file does not bring it back`,
        `plans[0].templates: template "debian-12" is retired`
      ])
      assert.isTrue(Option.getOrThrow(yield* catalog.plan("vps-s")).retired)
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a pool node holding no template of its cluster (a typo, often) is warned about", () =>
    Effect.gen(function*() {
      const summary = yield* apply(catalogFile({ ipPools: [ipPool({ nodes: ["pve1", "pve-1"] })] }))
      assert.deepStrictEqual(summary.warnings, [`ipPools[0].nodes: node "pve-1" holds no template of cluster "pve"`])
      assert.deepStrictEqual(summary.ipPools, counts(1, 0, 0))
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("applyCatalogFile reads the file and its CA files beside it; an unreadable file is a problem too", () =>
    Effect.gen(function*() {
      const file = catalogFile({ proxmox: [cluster({ tls: { caFile: "pve-ca.pem", fingerprint: null, insecure: false } })] })
      const read = files({ "/etc/zh/catalog.json": JSON.stringify(file), "/etc/zh/pve-ca.pem": PEM })
      yield* applyCatalogFile("/etc/zh/catalog.json", read)
      assert.strictEqual(Option.getOrThrow(yield* (yield* Catalog).cluster("pve")).tls.ca, PEM.trim())
      assert.deepStrictEqual(yield* problemsOf(applyCatalogFile("/etc/zh/nope.json", read)), [
        `cannot read the catalog file "/etc/zh/nope.json": ENOENT: no such file or directory, open '/etc/zh/nope.json'`
      ])
    }).pipe(Effect.provide(catalogEnv())))

  it("the summary reads as one line per kind, then the warnings", () => {
    assert.deepStrictEqual(
      formatSummary({
        clusters: counts(1, 0, 0),
        panels: counts(0, 0, 1),
        templates: counts(2, 1, 0),
        ipPools: counts(0, 0, 0),
        plans: counts(0, 3, 1),
        warnings: [`plans[0]: plan "x" is retired; applying the file does not bring it back`]
      }),
      [
        "Proxmox clusters: 1 created, 0 updated, 0 unchanged",
        "Pterodactyl panels: 0 created, 0 updated, 1 unchanged",
        "OS templates: 2 created, 1 updated, 0 unchanged",
        "IP pools: 0 created, 0 updated, 0 unchanged",
        "plans: 0 created, 3 updated, 1 unchanged",
        `warning: plans[0]: plan "x" is retired; applying the file does not bring it back`
      ]
    )
  })
})
