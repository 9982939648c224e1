// A server process killed (SIGKILL, no shutdown) in the middle of a provisioning resumes it when it starts again:
// the workflow's state is in the database, the sandbox panel's in its state file beside it. The order completes
// once, with one server on the panel, and the customer never sees it fail.
import { afterEach, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { cleanUp, exitOf, startServer, tempDir } from "./processes.ts"

afterEach(cleanUp)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface OrderBody {
  readonly id: string
  readonly status: string
  readonly progress: { readonly step: number; readonly total: number; readonly name: string }
  readonly serviceId?: string
  readonly failureReason?: string
}

const signIn = async (url: string) => {
  const browser = new Browser(url)
  const email = `resume.${Date.now()}@example.com`
  const account = { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" }
  expect((await browser.post("/api/auth/register", account)).status).toBe(201)
  expect((await browser.post("/api/auth/login", { email, password: account.password, rememberMe: true })).status).toBe(200)
  return browser
}

const orderOf = async (browser: Browser, id: string) => {
  const reply = await browser.get(`/api/orders/${id}`)
  expect(reply.status, reply.text).toBe(200)
  return reply.body as OrderBody
}

/** Follows the order until `reached` holds (or fails on an early end), then kills the server without warning. */
const killWhen = async (server: Awaited<ReturnType<typeof startServer>>, browser: Browser, orderId: string, reached: (o: OrderBody) => boolean) => {
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
  server.process.kill("SIGKILL")
  await exitOf(server, 10_000)
}

/** Starts the server again on the same data and follows the order to its end with the same session. */
const resumed = async (env: Record<string, string>, browser: Browser, orderId: string) => {
  const server = await startServer(env)
  const again = new Browser(server.url)
  for (const [name, value] of browser.cookies) again.cookies.set(name, value)
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
    const dataDir = await tempDir("resume-vps")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic" }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"
    const placed = await browser.post("/api/orders", { planId: "vps-s", options: { templateId: "debian-12", hostname: "resume-1", sshPublicKey: key } })
    expect(placed.status, placed.text).toBe(201)
    const orderId = (placed.body as { order: OrderBody }).order.id
    // The clone takes 1.5 s on the sandbox: kill while it runs.
    await killWhen(first, browser, orderId, (o) => o.progress.step === 2)
    const { browser: again, order, server } = await resumed(env, browser, orderId)
    expect(order.status, order.failureReason).toBe("completed")
    const list = await again.get("/api/vps")
    expect((list.body as { vps: ReadonlyArray<unknown> }).vps).toHaveLength(1)
    const vps = await again.get(`/api/vps/${order.serviceId}`)
    expect(vps.status, vps.text).toBe(200)
    expect((vps.body as { vps: { status: string; hostname: string } }).vps).toMatchObject({ status: "running", hostname: "resume-1" })
    server.process.kill("SIGTERM")
    await exitOf(server, 20_000)
  }, 240_000)

  it("resumes the game server's workflow at the next start and completes the order", async () => {
    const dataDir = await tempDir("resume")
    // Realistic sandbox speed: the install takes a few seconds, time enough to kill the process during it.
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic" }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const placed = await browser.post("/api/orders", { planId: "mc-2g", options: {} })
    expect(placed.status, placed.text).toBe(201)
    const orderId = (placed.body as { order: OrderBody }).order.id

    // The install takes 3 s on the sandbox: kill while it runs.
    await killWhen(first, browser, orderId, (o) => o.progress.step === 5 && o.status === "provisioning")
    const { browser: again, order: finished, server: second } = await resumed(env, browser, orderId)
    expect(finished.status, finished.failureReason).toBe("completed")
    const servers = await again.get("/api/game-servers")
    const list = (servers.body as { gameServers: ReadonlyArray<{ id: string; status: string }> }).gameServers
    expect(list.map((s) => s.id)).toEqual([finished.serviceId])
    expect(list[0]?.status).toBe("active")
    second.process.kill("SIGTERM")
    await exitOf(second, 20_000)
  }, 240_000)
})
