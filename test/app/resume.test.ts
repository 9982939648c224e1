// A server process killed (SIGKILL, no shutdown) in the middle of a provisioning resumes it when it starts again:
// the workflow's state is in the database, the sandbox panel's in its state file beside it. The order completes
// once, with one server on the panel, and the customer never sees it fail. With two instances on one PostgreSQL, a
// SIGTERM hands the workflow to the other one at once.
import { randomBytes } from "node:crypto"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startSandboxProxmox } from "../../app/sandbox/proxmox/SandboxProxmox.ts"
import { Browser } from "../support/browser.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { cleanUp, createDatabase, exitOf, freePort, migratedDataDir, run, startServer, tempDir } from "./processes.ts"

const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await cleanUp()
  await Promise.all(closing.splice(0).map((close) => close()))
})

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

/**
 * Follows the order to its end on `server` with the same session. A restart keeps its PORT, as an operator's does: the
 * workflow engine's runner address is HOST:PORT, so the new process takes the dead one's shard leases back at once
 * instead of waiting for them to expire (35 s).
 */
const resumed = async (server: Awaited<ReturnType<typeof startServer>>, browser: Browser, orderId: string) => {
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
    const dataDir = await migratedDataDir("resume-vps")
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic", PORT: String(await freePort()) }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"
    const placed = await browser.post("/api/orders", { planId: "vps-s", options: { templateId: "debian-12", hostname: "resume-1", sshPublicKey: key } })
    expect(placed.status, placed.text).toBe(201)
    const orderId = (placed.body as { order: OrderBody }).order.id
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

  it("resumes the game server's workflow at the next start and completes the order", async () => {
    const dataDir = await migratedDataDir("resume")
    // Realistic sandbox speed: the install takes a few seconds, time enough to kill the process during it.
    const env = { NODE_ENV: "development", DATA_DIR: dataDir, BCRYPT_COST: "4", SANDBOX_TASK_SPEED: "realistic", PORT: String(await freePort()) }
    const first = await startServer(env)
    const browser = await signIn(first.url)
    const placed = await browser.post("/api/orders", { planId: "mc-2g", options: {} })
    expect(placed.status, placed.text).toBe(201)
    const orderId = (placed.body as { order: OrderBody }).order.id

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

/** A catalog file making `url` (a sandbox Proxmox the test runs) the real cluster "lab", with one VPS plan. */
const labCatalog = (url: string) => ({
  proxmox: [{
    name: "lab",
    url,
    username: "root@pam",
    password: "sandbox",
    tokenId: null,
    tokenSecret: null,
    tls: { caFile: null, fingerprint: null, insecure: false }
  }],
  templates: [
    { id: "debian-12", cluster: "lab", node: "pve1", vmid: 9000, name: "Debian 12" },
    { id: "debian-12", cluster: "lab", node: "pve2", vmid: 9100, name: "Debian 12" }
  ],
  ipPools: [{ id: "lab-public", cluster: "lab", cidr: "198.51.100.0/28", gateway: "198.51.100.1", bridge: "vmbr0", nodes: ["pve1", "pve2"] }],
  pterodactyl: [],
  plans: [{ id: "vps-s", kind: "vps", name: "VPS S", priceCents: 500, vcpu: 1, ramMiB: 1024, diskGiB: 20, templates: ["debian-12"], snapshotLimit: 2 }]
})

describe.skipIf(testDatabaseUrl === undefined)("two instances on one PostgreSQL", () => {
  it("a SIGTERM on the instance provisioning an order hands its workflow to the other at once", async ({ annotate }) => {
    // Slow tasks, in a sandbox both instances share: the order is still under way when its instance stops.
    const sandbox = await startSandboxProxmox({ taskDurations: { default: 500, qmclone: 2_000 } })
    closing.push(() => sandbox.close())
    const db = await createDatabase(testDatabaseUrl!)
    closing.push(db.drop)
    const catalogFile = join(await tempDir("handover-catalog"), "catalog.json")
    await writeFile(catalogFile, JSON.stringify(labCatalog(sandbox.url)))
    const env = {
      NODE_ENV: "development",
      DATABASE_URL: db.url,
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BCRYPT_COST: "4",
      CATALOG_FILE: catalogFile
    }
    const migrated = await run("app/cli.ts", ["migrate"], { ...env, DATA_DIR: await tempDir("handover-migrate") })
    expect(migrated.code, migrated.stderr).toBe(0)
    const servers = await Promise.all([
      startServer({ ...env, DATA_DIR: await tempDir("handover-a") }),
      startServer({ ...env, DATA_DIR: await tempDir("handover-b") })
    ] as const)
    const customers = [await signIn(servers[0].url), new Browser(servers[1].url)] as const
    for (const [name, value] of customers[0].cookies) customers[1].cookies.set(name, value)
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"
    const order = async (hostname: string) => {
      const placed = await customers[0].post("/api/orders", { planId: "vps-s", options: { templateId: "debian-12", hostname, sshPublicKey: key } })
      expect(placed.status, placed.text).toBe(201)
      return (placed.body as { order: OrderBody }).order.id
    }

    // The shards are split between the instances: which one runs a workflow is told by its Proxmox ticket, each
    // instance signing in on its own. A first VPS lets each instance show its ticket (its snapshots are read live).
    const ticketOf = (request: { readonly headers: Readonly<Record<string, string>> }) => request.headers["cookie"] ?? ""
    const first = await resumed(servers[0], customers[0], await order("handover-0"))
    expect(first.order.status, first.order.failureReason).toBe("completed")
    const tickets: Array<string> = []
    for (const customer of customers) {
      const since = sandbox.control.requests().length
      expect((await customer.get(`/api/vps/${first.order.serviceId}/snapshots`)).status).toBe(200)
      const read = sandbox.control.requests().slice(since).find((r) => r.method === "GET" && /\/snapshot$/.test(r.path))
      tickets.push(ticketOf(read!))
    }
    expect(new Set(tickets).size).toBe(2)

    const orderId = await order("handover-1")
    for (const until = Date.now() + 30_000; (await orderOf(customers[0], orderId)).progress.step < 2; await sleep(30)) {
      if (Date.now() > until) throw new Error("the clone never began")
    }
    const clone = sandbox.control.requests().findLast((r) => r.method === "POST" && /\/clone$/.test(r.path))
    const runner = tickets.indexOf(ticketOf(clone!))
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
    expect(sandbox.control.requests().slice(since).map(ticketOf).every((ticket) => ticket !== tickets[runner])).toBe(true)

    const { order: finished } = await resumed(other, customers[1 - runner]!, orderId)
    expect(finished.status, finished.failureReason).toBe("completed")
    expect(sandbox.control.state().vms.filter((vm) => vm.vmid >= 100_000).map((vm) => vm.status)).toEqual(["running", "running"])
  }, 240_000)
})
