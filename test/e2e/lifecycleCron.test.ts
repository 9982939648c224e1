// The lifecycle cron fires by itself: a lapsed subscription's VPS is suspended at the next scheduled sweep with nobody
// calling the sweep (the cluster cron of the running app does). LIFECYCLE_CRON is every 2 seconds here (every minute by
// default): the same cron, less waiting.
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, provisionedVps, signedInCustomer, waitFor } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer({ lifecycleCron: "*/2 * * * * *" })
})
afterAll(() => server.stop())

describe("the lifecycle cron", () => {
  it("suspends a lapsed VPS on its own at the next scheduled sweep", async () => {
    const browser = await signedInCustomer(server, await leakScanner(server), "cron")
    const { subscriptionId, vpsId } = await provisionedVps(browser, "cron-1")
    // Cancelled, so the period's end is a lapse (a subscription that is not cancelled is renewed on its saved card).
    expect((await browser.post(`/api/subscriptions/${subscriptionId}/cancel`)).status).toBe(200)
    await server.runtime.runPromise(Effect.gen(function*() {
      const subscriptions = yield* Subscriptions
      const current = Option.getOrThrow(yield* subscriptions.get(subscriptionId))
      yield* subscriptions.extend(subscriptionId, current.currentPeriodEnd, new Date(Date.now() - 60_000))
    }))
    // The cron runs every 2 s: at most one period, plus the suspension itself.
    const status = await waitFor("the cron to suspend the VPS", async () => {
      const reply = await browser.get(`/api/vps/${vpsId}`)
      const body = reply.body as { vps: { status: string } }
      return body.vps.status === "suspended" ? body.vps.status : undefined
    }, 90_000)
    expect(status).toBe("suspended")
  }, 150_000)
})
