// Two server processes with the same settings on one PostgreSQL are two runners of the workflow engine that reach each
// other directly: an order placed on one whose workflow lives on the other starts at once (no storage polling between
// them), a burst through both completes without a collision of their generated ids, and a runner killed outright
// (SIGKILL) mid-provisioning has its workflow carried on by the survivor within seconds.
import { paid, payOrder } from "../support/checkout.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RecordedRequest } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { testDatabaseUrl } from "../support/databases.ts"
import { type Lab, type OrderBody, orderOf, placeVps, settled, signIn, sleep, SSH_KEY, startLab } from "./labInstances.ts"
import { cleanUp, exitOf } from "./processes.ts"

/** The sandbox's clone task: long enough to kill the instance while it runs. */
const CLONE_MS = 1_000

describe.skipIf(testDatabaseUrl === undefined)("two instances with identical settings on one PostgreSQL", () => {
  let lab: Lab

  beforeAll(async () => {
    lab = await startLab({ adminUrl: testDatabaseUrl!, count: 2, taskDurations: { default: 0, qmclone: CLONE_MS }, cidr: "198.51.100.0/26" })
  }, 120_000)

  afterAll(async () => {
    await cleanUp()
    await lab?.close()
  })

  /** Index of the first request from `since` on that `match` accepts, once there is one (within `ms`). */
  const firstRequest = async (since: number, match: (r: RecordedRequest) => boolean, ms: number) => {
    for (const until = Date.now() + ms; Date.now() < until; await sleep(10)) {
      const found = lab.sandbox.control.requests().slice(since).find(match)
      if (found !== undefined) return found
    }
    return undefined
  }

  it("a paid order's workflow starts at once on whichever instance runs it, and both instances run some", async ({ annotate }) => {
    // Orders placed in turn on each instance, one at a time, and paid. The verified webhook reaches both instances;
    // whichever records it first starts the workflow, which runs on the instance owning its shard. The workflow's first
    // upstream request after the payment tells which instance runs it and when it began. Until each instance ran at
    // least one (and three in all).
    const latencies: Array<Array<number>> = lab.servers.map(() => [])
    for (let n = 0; (latencies.some((l) => l.length === 0) || latencies.flat().length < 3) && n < 24; n++) {
      const placedOn = n % 2
      const customer = lab.customers[placedOn]!
      const placed = await customer.post("/api/orders", { planId: "vps-s", expressStartConsent: true, options: { templateId: "debian-12", hostname: `latency-${n}`, sshPublicKey: SSH_KEY } })
      expect(placed.status, placed.text).toBe(201)
      const order = (placed.body as { order: OrderBody }).order
      // After the order's own room check: from here on, upstream requests are the workflow's.
      const since = lab.sandbox.control.requests().length
      await payOrder(customer, order)
      const paidAt = Date.now()
      const first = await firstRequest(since, () => true, 15_000)
      const startedAfter = Date.now() - paidAt
      expect(first, "the workflow never began").toBeDefined()
      const ranOn = lab.serverOf(first!)
      expect(ranOn).toBeGreaterThanOrEqual(0)
      latencies[ranOn]!.push(startedAfter)
      expect((await settled(customer, order.id, 30_000, lab.servers)).status).toBe("completed")
    }
    await annotate(`ms from the paid order to its workflow's first upstream request: ${latencies.map((l, i) => `instance ${i}: ${l.join(", ")}`).join("; ")}`)
    expect(latencies.map((l) => l.length > 0)).toEqual(lab.servers.map(() => true))
    // effect/cluster's storage poll, the only way between instances before, came every 10 s.
    for (const ms of latencies.flat()) expect(ms).toBeLessThan(2_000)
  }, 120_000)

  it("a burst of 50 concurrent orders through both instances completes, with no 5xx and no duplicate key", async ({ annotate }) => {
    const customers = await Promise.all(Array.from({ length: 5 }, (_, i) => signIn(lab.servers[i % 2]!.url, `burst${i}`)))
    const startedAt = Date.now()
    const placed = await Promise.all(Array.from({ length: 50 }, async (_, n) => {
      const customer = customers[n % 5]!
      const reply = await customer.post("/api/orders", {
        planId: "vps-s",
        expressStartConsent: true,
        options: { templateId: "debian-12", hostname: `burst-${n}`, sshPublicKey: SSH_KEY }
      })
      if (reply.status === 201) await paid((reply.body as { order: { id: string; status: string; checkoutUrl?: string } }).order)
      return { customer, reply }
    }))
    expect(placed.map(({ reply }) => reply.status).filter((status) => status !== 201), placed.map(({ reply }) => reply.text).join("\n"))
      .toEqual([])
    const orders = []
    for (const { customer, reply } of placed) {
      orders.push(await settled(customer, (reply.body as { order: { id: string } }).order.id, 90_000, lab.servers))
    }
    const seconds = (Date.now() - startedAt) / 1000
    await annotate(`50 orders through two instances: ${orders.filter((o) => o.status === "completed").length} completed in ${seconds.toFixed(1)} s`)
    expect(orders.map((o) => o.failureReason ?? o.status).filter((s) => s !== "completed")).toEqual([])
    for (const server of lab.servers) expect(server.stdout() + server.stderr()).not.toMatch(/duplicate key/i)
  }, 150_000)

  it("a SIGKILL of the instance running a provisioning: the other carries the workflow on within seconds", async ({ annotate }) => {
    const since = lab.sandbox.control.requests().length
    const id = await placeVps(lab.customers[0]!, "killed-runner")
    const clone = await firstRequest(since, (r) => r.method === "POST" && /\/clone$/.test(r.path), 15_000)
    expect(clone, "the clone never began").toBeDefined()
    const runner = lab.serverOf(clone!)
    expect(runner).toBeGreaterThanOrEqual(0)
    const [killed, survivor] = [lab.servers[runner]!, lab.servers[1 - runner]!]
    // Into the clone, then without warning.
    await sleep(200)
    killed.process.kill("SIGKILL")
    const killedAt = Date.now()
    await exitOf(killed, 10_000)
    const afterKill = lab.sandbox.control.requests().length
    const resumed = await firstRequest(afterKill, (r) => lab.serverOf(r) === 1 - runner, 30_000)
    const seconds = (Date.now() - killedAt) / 1000
    await annotate(`the survivor's first upstream request for the workflow came ${resumed === undefined ? "never" : `${seconds.toFixed(1)} s`} after the kill`)
    expect(resumed, `the survivor never resumed the workflow\n${survivor.stdout()}\n${survivor.stderr()}`).toBeDefined()
    expect(seconds).toBeLessThan(10)
    const done = await settled(lab.customers[1 - runner]!, id, 60_000, [survivor])
    expect(done.status, done.failureReason).toBe("completed")
    expect((await orderOf(lab.customers[1 - runner]!, id)).serviceId).toBeDefined()
  }, 120_000)
})
