// The requests the adapter sends for the lookups and deletions that must never guess, observed in the simulated
// panel's request log (in memory): exact routes instead of filters, a deletion read first and sent only for our own
// server, nothing sent for a server already gone.
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatedGamePanel from "../../../adapters/pterodactyl/SimulatedGamePanel.ts"
import { GamePanel, type NewServer } from "../../../ports/GamePanel.ts"
import { panelControl, panelPaths, panelRequests } from "../../support/simulatedPanel.ts"

const spec = (orderId: string, allocation: number): NewServer => ({
  name: orderId, orderId, user: 1, egg: 5, dockerImage: "ghcr.io/pterodactyl/yolks:java_21", startup: "java -jar server.jar",
  environment: { SERVER_JARFILE: "server.jar", MINECRAFT_VERSION: "latest", BUILD_NUMBER: "latest" },
  limits: { memoryMiB: 1024, swapMiB: 0, diskMiB: 2048, io: 500, cpuPercent: 100 }, oomDisabled: true,
  featureLimits: { databases: 0, backups: 1, allocations: 1 }, allocation, startOnCompletion: false
})
const deletions = panelRequests("DELETE", panelPaths.server)

describe("PterodactylGamePanel's requests, on the simulated panel", () => {
  layer(SimulatedGamePanel.layer())((it) => {
    it.effect("a server is read by id, or by its exact external id route (never a filter): installed is status null", () =>
      Effect.gen(function*() {
        const p = yield* GamePanel
        const server = yield* p.createServer("sandbox", spec("gs_1", 1))
        yield* TestClock.adjust("30 seconds")
        assert.strictEqual((yield* p.server("sandbox", server.id)).state, "installed")
        assert.strictEqual((yield* p.serverForOrder("sandbox", "gs_1"))?.id, server.id)
        assert.isNull(yield* p.serverForOrder("sandbox", "gs_"))
        const lookups = (yield* panelControl).requests().filter((r) => r.path.startsWith("/api/application/servers"))
        assert.includeMembers(lookups.map((r) => r.path), ["/api/application/servers/external/gs_1", "/api/application/servers/external/gs_"])
        assert.isFalse(lookups.some((r) => Object.keys(r.query).some((k) => k.startsWith("filter"))))
      }))

    it.effect("a server whose external id is not ours is read and refused: no DELETE is sent", () =>
      Effect.gen(function*() {
        const p = yield* GamePanel
        const server = yield* p.createServer("sandbox", spec("gs_2", 2))
        yield* Effect.map(panelControl, (c) => c.setExternalId(server.id, "whmcs_9"))
        const before = yield* deletions
        const refused = yield* Effect.flip(p.deleteOurServer("sandbox", server.id, "gs_2"))
        assert.deepInclude(refused, { _tag: "PanelServerNotOurs", id: server.id, expected: "gs_2", found: "whmcs_9" })
        assert.strictEqual(yield* deletions, before)
        assert.strictEqual((yield* p.server("sandbox", server.id)).orderId, "whmcs_9")
      }))

    it.effect("suspend and unsuspend succeed twice over; a server already gone is deleted without a DELETE", () =>
      Effect.gen(function*() {
        const p = yield* GamePanel
        const server = yield* p.createServer("sandbox", spec("gs_3", 3))
        yield* p.suspend("sandbox", server.id)
        yield* p.suspend("sandbox", server.id)
        yield* p.unsuspend("sandbox", server.id)
        yield* p.unsuspend("sandbox", server.id)
        const before = yield* deletions
        yield* p.deleteOurServer("sandbox", server.id, "gs_3")
        assert.strictEqual(yield* deletions, before + 1)
        yield* p.deleteOurServer("sandbox", server.id, "gs_3")
        assert.strictEqual(yield* deletions, before + 1)
      }))
  })
})
