// The public list of plans: only what a customer may see and can order now.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { listPlansForSale } from "../../../domain/catalog/listPlansForSale.ts"
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
})
