// A server process killed (SIGKILL, no shutdown) in the middle of a provisioning resumes it when it starts again:
// the workflow's state is in the database, the sandbox panel's in its state file beside it. The order completes
// once, with one server on the panel, and the customer never sees it fail. Stopped by SIGTERM instead, the process on
// the embedded database exits 0 with the workflow under way and the next start resumes it. With two instances on one
// PostgreSQL, a SIGTERM hands the workflow to the other one at once.
import { payOrder } from "../support/checkout.ts"
import { afterEach, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { type Lab, type OrderBody, orderOf, placeVps, sameSession, signIn, sleep, startLab } from "./labInstances.ts"
import { cleanUp, exitOf, migratedDataDir, type Server, startServer } from "./processes.ts"

const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(closing.splice(0).map((close) => close()))
})

/**
 * Follows the order until `reached` holds (or fails on an early end), then kills the server without warning (or
 * stops it with `signal`): how the process ended.
 */
const killWhen = async (
  server: Server,
  browser: Browser,
  orderId: string,
  reached: (o: OrderBody) => boolean,
  signal: "SIGKILL" | "SIGTERM" = "SIGKILL"
) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const order = await orderOf(browser, orderId)
    if (reached(order)) break
    if (order.status !== "provisioning" && order.status !== "pending") throw new Error(`order ended early: ${JSON.stringify(order)}`)
    if (Date.now() > deadline) throw new Error("the step never began")
    await sleep(30)
  }
  // The sandboxes write their state files a moment after each change (a real upstream commits before answering):
  // let them, then kill while the step's upstream work still runs.
  await sleep(700)
  server.process.kill(signal)
  return await exitOf(server, 30_000)
}

/**
 * Follows the order to its end on `server` with the same session. On the embedded database the engine's one runner has
 * a fixed address, so a restart (here on another PORT) takes the shard leases the dead process left back at once
 * instead of waiting for them to expire (35 s).
 */
const resumed = async (server: Server, browser: Browser, orderId: string) => {
  const again = sameSession(browser, server.url)
  const until = Date.now() + 60_000
  for (;;) {
    const order = await orderOf(again, orderId)
    if (order.status === "completed" || order.status === "failed") return { server, browser: again, order }
    if (Date.now() > until) throw new Error(`not resumed: ${JSON.stringify(order)}\n${server.stdout()}\n${server.stderr()}`)
    await sleep(100)
  }
}

describe("a process killed mid-provisioning", () => {
  it("resumes the VPS workflow during the clone at the next start and completes the order", async () => {
    const dataDir = await migratedDataDir("resume-vps")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic" }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const orderId = await placeVps(browser, "resume-1")
    // The clone takes 1.5 s on the sandbox: kill while it runs.
    await killWhen(first, browser, orderId, (o) => o.progress.step === 2)
    const { browser: again, order, server } = await resumed(await startServer(env), browser, orderId)
    expect(order.status, order.failureReason).toBe("completed")
    const list = await again.get("/api/vps")
    expect((list.body as { vps: ReadonlyArray<unknown> }).vps).toHaveLength(1)
    const vps = await again.get(`/api/vps/${order.serviceId}`)
    expect(vps.status, vps.text).toBe(200)
    expect((vps.body as { vps: { status: string; hostname: string } }).vps).toMatchObject({ status: "running", hostname: "resume-1" })
    server.process.kill("SIGTERM")
    await exitOf(server, 20_000)
  }, 240_000)

  it("stopped by SIGTERM during the clone, exits 0 and resumes the workflow at the next start", async () => {
    const dataDir = await migratedDataDir("resume-vps-term")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic" }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const orderId = await placeVps(browser, "resume-term-1")
    // Within 30 s (killWhen's wait for the exit): the workflow under way handed back, not a stop that stalls.
    const exit = await killWhen(first, browser, orderId, (o) => o.progress.step === 2, "SIGTERM")
    expect(exit, first.stderr()).toEqual({ code: 0, signal: null })
    const { order, server } = await resumed(await startServer(env), browser, orderId)
    expect(order.status, order.failureReason).toBe("completed")
    server.process.kill("SIGTERM")
    await exitOf(server, 20_000)
  }, 240_000)

  it("resumes the game server's workflow at the next start and completes the order", async () => {
    const dataDir = await migratedDataDir("resume")
    // Realistic sandbox speed: the install takes a few seconds, time enough to kill the process during it.
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic" }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const placed = await browser.post("/api/orders", { planId: "mc-2g", expressStartConsent: true, options: {} })
    expect(placed.status, placed.text).toBe(201)
    const orderId = (placed.body as { order: OrderBody }).order.id
    await payOrder(browser, (placed.body as { order: OrderBody }).order)

    // The install takes 3 s on the sandbox: kill while it runs.
    await killWhen(first, browser, orderId, (o) => o.progress.step === 5 && o.status === "provisioning")
    const { browser: again, order: finished, server: second } = await resumed(await startServer(env), browser, orderId)
    expect(finished.status, finished.failureReason).toBe("completed")
    const servers = await again.get("/api/game-servers")
    const list = (servers.body as { gameServers: ReadonlyArray<{ id: string; status: string }> }).gameServers
    expect(list.map((s) => s.id)).toEqual([finished.serviceId])
    expect(list[0]?.status).toBe("active")
    second.process.kill("SIGTERM")
    await exitOf(second, 20_000)
  }, 240_000)
})

describe.skipIf(testDatabaseUrl === undefined)("two instances on one PostgreSQL", () => {
  let lab: Lab | undefined
  afterEach(async () => {
    await cleanUp()
    await lab?.close()
  })

  it("a SIGTERM on the instance provisioning an order hands its workflow to the other at once", async ({ annotate }) => {
    // Slow tasks, in a sandbox both instances share: the order is still under way when its instance stops.
    lab = await startLab({ adminUrl: testDatabaseUrl!, count: 2, taskDurations: { default: 500, qmclone: 2_000 } })
    const { sandbox, servers, customers } = lab
    const orderId = await placeVps(customers[0]!, "handover-1")
    for (const until = Date.now() + 30_000; (await orderOf(customers[0]!, orderId)).progress.step < 2; await sleep(30)) {
      if (Date.now() > until) throw new Error("the clone never began")
    }
    const clone = sandbox.control.requests().findLast((r) => r.method === "POST" && /\/clone$/.test(r.path))
    const runner = lab.serverOf(clone!)
    expect(runner).toBeGreaterThanOrEqual(0)
    const [stopped, other] = [servers[runner]!, servers[1 - runner]!]

    const signalled = Date.now()
    stopped.process.kill("SIGTERM")
    const exit = await exitOf(stopped, 30_000)
    const exitedAt = Date.now()
    expect(exit, stopped.stderr()).toEqual({ code: 0, signal: null })
    const since = sandbox.control.requests().length
    let resumedAfter: number | undefined
    for (const until = exitedAt + 60_000; resumedAfter === undefined && Date.now() < until; await sleep(20)) {
      if (sandbox.control.requests().length > since) resumedAfter = Date.now() - exitedAt
    }
    await annotate(`the runner exited 0 ${exitedAt - signalled} ms after SIGTERM; the other's first upstream request came ${resumedAfter ?? "never"} ms later`)
    expect(resumedAfter, "the other instance never resumed the workflow").toBeDefined()
    expect(resumedAfter!).toBeLessThan(5_000)
    expect(sandbox.control.requests().slice(since).every((r) => lab!.serverOf(r) !== runner)).toBe(true)

    const { order: finished } = await resumed(other, customers[1 - runner]!, orderId)
    expect(finished.status, finished.failureReason).toBe("completed")
    expect(sandbox.control.state().vms.filter((vm) => vm.vmid >= 100_000).map((vm) => vm.status)).toEqual(["running", "running"])
  }, 240_000)
})
