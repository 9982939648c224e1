// One UpstreamSecrets contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import * as PgUpstreamSecrets from "../../adapters/postgres/PgUpstreamSecrets.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"
import { sqlBackends } from "../support/databases.ts"

const monday = new Date("2026-03-02T09:00:00.000Z")
const tuesday = new Date("2026-03-03T09:00:00.000Z")
/** A value shaped like SecretBox output; the port stores it as an opaque string. */
const sealed = (label: string) => `v1:${Buffer.from(`sealed ${label}`).toString("base64")}`

const contract = (name: string, impl: Layer.Layer<UpstreamSecrets, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("keeps a sealed value under its name", () =>
      Effect.gen(function*() {
        const secrets = yield* UpstreamSecrets
        yield* secrets.put("get/proxmox-password", sealed("pve"), monday)
        assert.deepStrictEqual(Option.getOrThrow(yield* secrets.get("get/proxmox-password")), {
          name: "get/proxmox-password",
          sealed: sealed("pve"),
          updatedAt: monday
        })
        assert.isTrue(Option.isNone(yield* secrets.get("get/never-stored")))
      }))

    it.effect("putting a name again replaces its value and date", () =>
      Effect.gen(function*() {
        const secrets = yield* UpstreamSecrets
        yield* secrets.put("replace/panel-key", sealed("old"), monday)
        yield* secrets.put("replace/panel-key", sealed("new"), tuesday)
        assert.deepStrictEqual(Option.getOrThrow(yield* secrets.get("replace/panel-key")), {
          name: "replace/panel-key",
          sealed: sealed("new"),
          updatedAt: tuesday
        })
        const listed = (yield* secrets.list).filter((s) => s.name === "replace/panel-key")
        assert.deepStrictEqual(listed, [{ name: "replace/panel-key", updatedAt: tuesday }])
      }))

    it.effect("lists names and dates only, ordered by name, without any sealed value", () =>
      Effect.gen(function*() {
        const secrets = yield* UpstreamSecrets
        yield* secrets.put("list/node-b", sealed("list b"), tuesday)
        yield* secrets.put("list/node-c", sealed("list c"), monday)
        yield* secrets.put("list/node-a", sealed("list a"), monday)
        const listed = yield* secrets.list
        assert.deepStrictEqual(listed.filter((s) => s.name.startsWith("list/")), [
          { name: "list/node-a", updatedAt: monday },
          { name: "list/node-b", updatedAt: tuesday },
          { name: "list/node-c", updatedAt: monday }
        ])
        const names = listed.map((s) => s.name)
        assert.deepStrictEqual(names, [...names].sort())
        for (const entry of listed) assert.deepStrictEqual(Object.keys(entry).sort(), ["name", "updatedAt"])
        assert.notInclude(JSON.stringify(listed), "v1:")
      }))

    it.effect("remove says whether something was removed", () =>
      Effect.gen(function*() {
        const secrets = yield* UpstreamSecrets
        yield* secrets.put("remove/old-token", sealed("gone"), monday)
        yield* secrets.put("remove/kept-token", sealed("kept"), monday)
        assert.isTrue(yield* secrets.remove("remove/old-token"))
        assert.isFalse(yield* secrets.remove("remove/old-token"))
        assert.isTrue(Option.isNone(yield* secrets.get("remove/old-token")))
        assert.isTrue(Option.isSome(yield* secrets.get("remove/kept-token")))
        assert.isFalse(yield* secrets.remove("remove/never-stored"))
      }))

    it.effect("all returns every stored secret with its sealed value, for key rotation", () =>
      Effect.gen(function*() {
        const secrets = yield* UpstreamSecrets
        yield* secrets.put("all/two", sealed("two"), tuesday)
        yield* secrets.put("all/one", sealed("one"), monday)
        const all = yield* secrets.all
        assert.deepStrictEqual(all.filter((s) => s.name.startsWith("all/")), [
          { name: "all/one", sealed: sealed("one"), updatedAt: monday },
          { name: "all/two", sealed: sealed("two"), updatedAt: tuesday }
        ])
        assert.deepStrictEqual(all.map((s) => ({ name: s.name, updatedAt: s.updatedAt })), yield* secrets.list)
      }))
  })

describe("UpstreamSecrets contract", () => {
  contract("in memory", MemoryUpstreamSecrets.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgUpstreamSecrets.layer.pipe(Layer.provide(db)))
})
