// A server on the embedded database (PGlite) stops promptly with provisionings under way: the workflow engine hands
// its 300 shards off at once while the workflows drain, every lock statement taking its turn at PGlite's one session
// (app/EngineLocks.ts, GuardedPgliteRunnerStorage, says why this once never ended).
import { describe, expect, it } from "vitest"
import { OrderView } from "../../adapters/http/views.ts"
import { payCheckout, TEST_CARD } from "../support/checkout.ts"
import { embeddedTestDatabase, startTestServer } from "../support/testServer.ts"
import { Envelopes, expectBody, leakScanner, signedInCustomer, sleep, vpsOrder, waitFor } from "../support/vpsHttp.ts"

/** Enough provisionings, each slow upstream (the sandbox's realistic task speed), to keep the session busy at the stop. */
const ORDERS = 40
/** WORKFLOW_LOCK_REFRESH_SECONDS: how long one shard-lock statement may take (production: 10 s). */
const LOCK_REFRESH_SECONDS = 5
/** Beyond the entities' drain at a stop (effect/cluster's entityTerminationTimeout, 15 s): a stop that never ends. */
const STOP_LIMIT_MS = 30_000

describe("a server on the embedded database", () => {
  it("stops within seconds while its provisionings are under way", async ({ annotate }) => {
    const server = await startTestServer(
      { sandboxTaskSpeed: "realistic", workflowLockRefreshSeconds: LOCK_REFRESH_SECONDS },
      {},
      embeddedTestDatabase()
    )
    const scan = await leakScanner(server)
    const customers = await Promise.all(Array.from({ length: 5 }, (_, i) => signedInCustomer(server, scan, `stop${i}`)))
    const placed = await Promise.all(Array.from({ length: ORDERS }, async (_, n) => {
      const browser = customers[n % customers.length]!
      const order = expectBody(await browser.post("/api/orders", vpsOrder(`stop-${n}`)), 201, Envelopes.order).order
      expect((await payCheckout(order.checkoutUrl!, TEST_CARD)).status).toBe(303)
      return { browser, order }
    }))
    // Paid: each order's provisioning workflow has started.
    const statuses = await Promise.all(placed.map(({ browser, order }) =>
      waitFor(`order ${order.id} to be paid`, async () => {
        const status = expectBody(await browser.get(`/api/orders/${order.id}`), 200, OrderView).status
        return status === "awaiting_payment" ? undefined : status
      }, 120_000)))
    const underWay = statuses.filter((s) => s === "provisioning").length
    expect(underWay).toBeGreaterThan(0)

    const started = Date.now()
    const stopped = await Promise.race([
      server.stop().then(() => "stopped" as const),
      sleep(STOP_LIMIT_MS).then(() => "still stopping" as const)
    ])
    const ms = Date.now() - started
    const report = `${underWay} of ${ORDERS} provisionings under way at the stop; ${stopped} after ${ms} ms`
    console.info(report)
    await annotate(report)
    expect(stopped).toBe("stopped")
  }, 300_000)
})
