// The simulation reached in memory (proxmoxSimulation): requests through its node:http agent, and a transport fault's
// wait on the caller's Effect clock, so a TestClock decides when a delayed call is answered.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import { proxmoxSimulation, type ProxmoxSimulation } from "../../../adapters/proxmox/sandbox/ProxmoxSimulation.ts"

const TOKEN = { id: "root@pam!zh", secret: "in-memory" }

/** A GET through the simulation's agent: the status, or how the connection ended. */
const get = (sim: ProxmoxSimulation, path: string) =>
  Effect.callback<string>((resume) => {
    const request = Http.request(`${sim.url}/api2/json${path}`, {
      agent: sim.agents.http,
      headers: { Authorization: `PVEAPIToken=${TOKEN.id}=${TOKEN.secret}` }
    }, (response) => {
      response.resume()
      response.on("end", () => resume(Effect.succeed(String(response.statusCode))))
    })
    request.on("error", () => resume(Effect.succeed("cut")))
    request.end()
  })

describe("the simulation in memory", () => {
  it.effect("answers a delayed call once the caller's clock has moved on by the delay", () =>
    Effect.gen(function*() {
      const sim = yield* proxmoxSimulation({ tokens: [TOKEN] })
      sim.control.inject({ match: { path: /\/version$/ }, kind: { _tag: "delay", ms: 5_000 } })
      const answer = yield* Effect.forkChild(get(sim, "/version"))
      // The request crosses the in-memory connection on the event loop before the server starts waiting.
      yield* Effect.promise(() => new Promise((settled) => setTimeout(settled, 50)))
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(answer.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(answer), "200")
    }).pipe(Effect.scoped))

  it.effect("cuts the connection of a reset call, and answers the next one", () =>
    Effect.gen(function*() {
      const sim = yield* proxmoxSimulation({ tokens: [TOKEN] })
      sim.control.inject({ match: { path: /\/version$/ }, kind: { _tag: "reset" } })
      assert.strictEqual(yield* get(sim, "/version"), "cut")
      assert.strictEqual(yield* get(sim, "/version"), "200")
    }).pipe(Effect.scoped))

  it.effect("keeps only the most recent requests in its log when given a limit", () =>
    Effect.gen(function*() {
      const sim = yield* proxmoxSimulation({ tokens: [TOKEN], requestLogLimit: 10 })
      for (let i = 0; i < 40; i++) assert.strictEqual(yield* get(sim, "/version"), "200")
      assert.strictEqual(yield* get(sim, "/nodes"), "200")
      const kept = sim.control.requests()
      assert.isAtLeast(kept.length, 10)
      assert.isAtMost(kept.length, 11)
      assert.strictEqual(kept.at(-1)?.path, "/api2/json/nodes")
    }).pipe(Effect.scoped))
})
