// The lifecycle cron fires by itself: a lapsed subscription's VPS is suspended within the next minute with nobody
// calling the sweep (the cluster cron of the running app does).
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, provisionedVps, signedInCustomer, waitFor } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

describe("the lifecycle cron", () => {
  it("suspends a lapsed VPS on its own within a minute", async () => {
    const browser = await signedInCustomer(server, await leakScanner(server), "cron")
    const { subscriptionId, vpsId } = await provisionedVps(browser, "cron-1")
    await server.runtime.runPromise(Effect.gen(function*() {
      const subscriptions = yield* Subscriptions
      const current = Option.getOrThrow(yield* subscriptions.get(subscriptionId))
      yield* subscriptions.extend(subscriptionId, current.currentPeriodEnd, new Date(Date.now() - 60_000))
    }))
    // The cron runs at every minute boundary: at most ~60 s, plus the suspension itself.
    const status = await waitFor("the cron to suspend the VPS", async () => {
      const reply = await browser.get(`/api/vps/${vpsId}`)
      const body = reply.body as { vps: { status: string } }
      return body.vps.status === "suspended" ? body.vps.status : undefined
    }, 90_000)
    expect(status).toBe("suspended")
  }, 150_000)
})
