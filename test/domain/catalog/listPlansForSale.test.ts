// The public list of plans: only what a customer may see and can order now.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { listPlansForSale, planForSale, UnsoldUpstreams } from "../../../domain/catalog/listPlansForSale.ts"
import { Catalog } from "../../../ports/Catalog.ts"
import { apply, catalogEnv, catalogFile, cluster, gamePlan, panel, template, vpsPlan } from "./catalogMother.ts"

const twoClusters = catalogFile({
  proxmox: [cluster(), cluster({ name: "pve-b", url: "https://pve-b.example:8006" })],
  templates: [
    template(),
    template({ id: "ubuntu-24", name: "Ubuntu 24.04", vmid: 9001 }),
    template({ id: "alma-9", name: "AlmaLinux 9", cluster: "pve-b", vmid: 9002 })
  ],
  plans: [
    vpsPlan({ id: "vps-m", priceCents: 900, templates: ["ubuntu-24", "debian-12"] }),
    gamePlan(),
    vpsPlan({ id: "vps-alma", priceCents: 700, templates: ["alma-9"] })
  ]
})

describe("plans for sale", () => {
  it.effect("lists active plans by price with their public fields only, VPS templates by name", () =>
    Effect.gen(function*() {
      yield* apply(twoClusters)
      assert.deepStrictEqual(yield* listPlansForSale, [
        {
          id: "mc-2g", kind: "game", name: "Minecraft 2 GB", priceCents: 600, memoryMiB: 2048, diskMiB: 10240, cpuPercent: 200,
          databases: 0, backups: 2, allocations: 1, userVariables: ["MINECRAFT_VERSION"]
        },
        {
          id: "vps-alma", kind: "vps", name: "VPS S", priceCents: 700, vcpu: 1, ramMiB: 1024, diskGiB: 20, snapshotLimit: 2,
          templates: [{ id: "alma-9", name: "AlmaLinux 9" }]
        },
        {
          id: "vps-m", kind: "vps", name: "VPS S", priceCents: 900, vcpu: 1, ramMiB: 1024, diskGiB: 20, snapshotLimit: 2,
          templates: [{ id: "ubuntu-24", name: "Ubuntu 24.04" }, { id: "debian-12", name: "Debian 12" }]
        }
      ])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("leaves out what cannot be ordered: retired templates, plans left with none, plans on a retired panel", () =>
    Effect.gen(function*() {
      yield* apply(twoClusters)
      const catalog = yield* Catalog
      yield* catalog.retire("template", "ubuntu-24")
      yield* catalog.retire("cluster", "pve-b")
      yield* catalog.retire("panel", "panel")
      assert.deepStrictEqual((yield* listPlansForSale).map((p) => [p.id, p.kind === "vps" ? p.templates.map((t) => t.id) : []]), [
        ["vps-m", ["debian-12"]]
      ])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a retired plan is not for sale", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile({ pterodactyl: [panel()], plans: [vpsPlan(), gamePlan()] }))
      yield* (yield* Catalog).retire("plan", "vps-s")
      assert.deepStrictEqual((yield* listPlansForSale).map((p) => p.id), ["mc-2g"])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("a plan can be ordered exactly when it is listed: retired, without a template copy, or on a retired panel it is not", () =>
    Effect.gen(function*() {
      yield* apply(twoClusters)
      const catalog = yield* Catalog
      const orderable = (id: string) => Effect.map(planForSale(id), Option.isSome)
      assert.isTrue(yield* orderable("vps-alma"))
      assert.isTrue(yield* orderable("mc-2g"))
      assert.isFalse(yield* orderable("no-such-plan"))
      yield* catalog.retire("cluster", "pve-b")
      yield* catalog.retire("panel", "panel")
      assert.isFalse(yield* orderable("vps-alma"))
      assert.isFalse(yield* orderable("mc-2g"))
      assert.isTrue(yield* orderable("vps-m"))
      yield* catalog.retire("plan", "vps-m")
      assert.isFalse(yield* orderable("vps-m"))
      assert.deepStrictEqual(yield* listPlansForSale, [])
    }).pipe(Effect.provide(catalogEnv())))

  it.effect("the plans of unsold upstreams (a former sandbox's cluster and panel) are neither listed nor orderable", () =>
    Effect.gen(function*() {
      yield* apply(twoClusters)
      const unsold = Effect.provideService(UnsoldUpstreams, { clusters: ["pve"], panels: ["panel"] })
      assert.deepStrictEqual((yield* unsold(listPlansForSale)).map((p) => p.id), ["vps-alma"])
      assert.isTrue(Option.isNone(yield* unsold(planForSale("vps-m"))))
      assert.isTrue(Option.isNone(yield* unsold(planForSale("mc-2g"))))
      assert.strictEqual(Option.getOrThrow(yield* unsold(planForSale("vps-alma"))).id, "vps-alma")
      // By default every registered, active upstream sells.
      assert.deepStrictEqual((yield* listPlansForSale).map((p) => p.id), ["mc-2g", "vps-alma", "vps-m"])
    }).pipe(Effect.provide(catalogEnv())))
})
