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

describe("a process killed mid-provisioning", () => {
  it("resumes the game server's workflow at the next start and completes the order", async () => {
    const dataDir = await tempDir("resume")
    // Realistic sandbox speed: the install takes a few seconds, time enough to kill the process during it.
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic" }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const placed = await browser.post("/api/orders", { planId: "mc-2g", options: {} })
    expect(placed.status, placed.text).toBe(201)
    const orderId = (placed.body as { order: OrderBody }).order.id

    const deadline = Date.now() + 30_000
    for (;;) {
      const order = await orderOf(browser, orderId)
      if (order.progress.step === 5 && order.status === "provisioning") break
      if (order.status !== "provisioning" && order.status !== "pending") throw new Error(`order ended early: ${JSON.stringify(order)}`)
      if (Date.now() > deadline) throw new Error("the install step never began")
      await sleep(30)
    }
    // The sandbox panel writes its state file a moment after each change (a real panel commits before answering):
    // let it, then kill while the install (3 s) still runs.
    await sleep(700)
    first.process.kill("SIGKILL")
    await exitOf(first, 10_000)

    const second = await startServer(env)
    const again = new Browser(second.url)
    for (const [name, value] of browser.cookies) again.cookies.set(name, value)
    let finished: OrderBody | undefined
    const until = Date.now() + 60_000
    while (finished === undefined) {
      const order = await orderOf(again, orderId)
      if (order.status === "completed" || order.status === "failed") finished = order
      else if (Date.now() > until) throw new Error(`not resumed: ${JSON.stringify(order)}\n${second.stdout()}\n${second.stderr()}`)
      else await sleep(100)
    }
    expect(finished.status, finished.failureReason).toBe("completed")
    const servers = await again.get("/api/game-servers")
    const list = (servers.body as { gameServers: ReadonlyArray<{ id: string; status: string }> }).gameServers
    expect(list.map((s) => s.id)).toEqual([finished.serviceId])
    expect(list[0]?.status).toBe("active")
    second.process.kill("SIGTERM")
    await exitOf(second, 20_000)
  }, 240_000)
})
