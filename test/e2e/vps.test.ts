// A VPS's whole life over HTTP, on the whole application (real database, sandbox Proxmox with instant tasks): order,
// provisioning progress, power, snapshots, the serial console, password reset, lapse, renewal and destruction.
// Every reply and every console frame is scanned for the hypervisor's address, tickets and task ids.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VPS_STEPS } from "../../domain/vps/ProvisionVps.ts"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { startTestServer, stripePayments } from "../support/testServer.ts"
import { payCheckout, TEST_CARD } from "../support/checkout.ts"
import { OrderView } from "../../adapters/http/views.ts"
import {
  Envelopes,
  errorCode,
  expectBody,
  freeAddresses,
  isReassignable,
  lapse,
  type LeakScanner,
  leakScanner,
  openConsole,
  orderVps,
  ownerConsole,
  panelHeaders,
  provisionedVps,
  type ScannedBrowser,
  signedInCustomer,
  sleep,
  STATE_WAIT_MS,
  sweep,
  type TestServer,
  vpsOrder,
  vpsStatus,
  waitFor,
  waitForVpsStatus
} from "../support/vpsHttp.ts"

let server: TestServer
let scan: LeakScanner
beforeAll(async () => {
  server = await startTestServer()
  scan = await leakScanner(server)
})
afterAll(() => server.stop())

const customer = () => signedInCustomer(server, scan)
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000)
const charges = () => server.runtime.runPromise(stripePayments)

/** A host address of the sandbox pool 192.0.2.0/24, other than its gateway .1 and broadcast .255. */
const inSandboxPool = (address: string) => {
  const host = /^192\.0\.2\.(\d{1,3})$/.exec(address)?.[1]
  return host !== undefined && Number(host) >= 2 && Number(host) <= 254
}

const subscriptionStatus = async (browser: ScannedBrowser, id: string) =>
  expectBody(await browser.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions.find((s) => s.id === id)
    ?.status

describe("ordering a VPS", () => {
  it("the plans on sale include VPS S with its OS templates and a limit of two snapshots", async () => {
    const reply = await (await customer()).get("/api/plans")
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({
      plans: expect.arrayContaining([expect.objectContaining({
        id: "vps-s",
        kind: "vps",
        snapshotLimit: 2,
        templates: expect.arrayContaining([{ id: "debian-12", name: "Debian 12" }, { id: "ubuntu-24-04", name: "Ubuntu 24.04" }])
      })])
    })
  })

  it("an order climbs through the six provisioning steps in order and ends completed at 6/6", async () => {
    const browser = await customer()
    const { order, placed, steps } = await orderVps(browser, "web-1")
    expect(placed).toMatchObject({ planId: "vps-s", kind: "vps", status: "awaiting_payment", progress: { total: 6 } })
    expect(placed.checkoutUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/)
    expect(order).toMatchObject({ status: "completed", progress: { step: 6, total: 6 } })
    const numbers = steps.map((s) => s.step)
    expect(numbers, JSON.stringify(steps)).toEqual([...numbers].sort((a, b) => a - b))
    for (const { name, step, total } of steps) {
      expect(total).toBe(6)
      if (step > 0) expect(name).toBe(VPS_STEPS[step - 1])
    }
    expect(steps.at(-1)).toEqual({ status: "completed", step: 6, total: 6, name: "Starting the server" })
  })

  it("the completed order carries the root password on its first read, and never again", async () => {
    const browser = await customer()
    const { order } = await orderVps(browser, "web-1")
    expect(order.rootPassword).toMatch(/^\S{12,}$/)
    const again = expectBody(await browser.get(`/api/orders/${order.id}`), 200, Envelopes.order.fields.order)
    expect(again.status).toBe("completed")
    expect(again).not.toHaveProperty("rootPassword")
  })

  it("the new VPS is listed, running, with its hostname and an address from the sandbox pool", async () => {
    const browser = await customer()
    const { order, vpsId } = await provisionedVps(browser, "web-1")
    const listed = expectBody(await browser.get("/api/vps"), 200, Envelopes.vpsList).vps
    expect(listed.map((v) => v.id)).toEqual([vpsId])
    const { vps } = expectBody(await browser.get(`/api/vps/${vpsId}`), 200, Envelopes.vps)
    expect(vps).toMatchObject({
      id: vpsId,
      subscriptionId: order.subscriptionId,
      planId: "vps-s",
      hostname: "web-1",
      templateId: "debian-12",
      status: "running"
    })
    expect(inSandboxPool(vps.address), vps.address).toBe(true)
    expect(vps.address).not.toBe("192.0.2.1")
    const subscriptions = expectBody(await browser.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions
    expect(subscriptions).toEqual([expect.objectContaining({ id: order.subscriptionId, status: "active", serviceId: vpsId })])
  })

  it("a card declined on the checkout page leaves the order awaiting its payment, nothing built; another card pays it", async () => {
    const browser = await customer()
    const placed = expectBody(await browser.post("/api/orders", vpsOrder("web-1")), 201, Envelopes.order).order
    expect(placed.status).toBe("awaiting_payment")
    const declined = await payCheckout(placed.checkoutUrl!, "4000000000000002")
    expect(declined.status).toBe(402)
    expect(declined.body).toContain("declined")
    const still = expectBody(await browser.get(`/api/orders/${placed.id}`), 200, OrderView)
    expect(still.status).toBe("awaiting_payment")
    expect(still.checkoutUrl).toBe(placed.checkoutUrl)
    expect(expectBody(await browser.get("/api/vps"), 200, Envelopes.vpsList).vps).toEqual([])
    expect(expectBody(await browser.get("/api/subscriptions"), 200, Envelopes.subscriptions).subscriptions).toEqual([])
    expect((await payCheckout(placed.checkoutUrl!, TEST_CARD)).status).toBe(303)
    await waitFor("the order to be paid", async () =>
      expectBody(await browser.get(`/api/orders/${placed.id}`), 200, OrderView).status !== "awaiting_payment" ? true : undefined)
  })
})

describe("power actions", () => {
  it("stop, start and reset move the VPS between stopped and running", async () => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    const power = async (action: string) =>
      expectBody(await browser.post(`/api/vps/${vpsId}/${action}`), 200, Envelopes.vps).vps.status
    expect(await power("stop")).toBe("stopped")
    expect(await vpsStatus(browser, vpsId)).toBe("stopped")
    expect(await power("start")).toBe("running")
    expect(await power("reset")).toBe("running")
    expect(await vpsStatus(browser, vpsId)).toBe("running")
  })

  it("a stopped VPS cannot be reset and has no console: 409 VPS_NOT_RUNNING", async () => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    expect((await browser.post(`/api/vps/${vpsId}/stop`)).status).toBe(200)
    expect(errorCode(await browser.post(`/api/vps/${vpsId}/reset`), 409)).toBe("VPS_NOT_RUNNING")
    expect(await openConsole(server, vpsId, scan, panelHeaders(browser))).toMatchObject({ _tag: "Refused", status: 409 })
  })
})

describe("snapshots", () => {
  const snapshotNames = async (browser: ScannedBrowser, vpsId: string) =>
    expectBody(await browser.get(`/api/vps/${vpsId}/snapshots`), 200, Envelopes.snapshots).snapshots.map((s) => s.name)

  it("a snapshot taken is listed with its description and time", async () => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    expect(await snapshotNames(browser, vpsId)).toEqual([])
    const created = await browser.post(`/api/vps/${vpsId}/snapshots`, { name: "before-upgrade", description: "safe point" })
    expect(expectBody(created, 201, Envelopes.snapshots).snapshots).toEqual([
      { name: "before-upgrade", description: "safe point", createdAt: expect.any(String) }
    ])
    expect(await snapshotNames(browser, vpsId)).toEqual(["before-upgrade"])
  })

  it("the plan keeps two snapshots: a third answers 409 SNAPSHOT_LIMIT_REACHED", async () => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    for (const name of ["before-upgrade", "after-upgrade"]) {
      expect((await browser.post(`/api/vps/${vpsId}/snapshots`, { name })).status).toBe(201)
    }
    expect(errorCode(await browser.post(`/api/vps/${vpsId}/snapshots`, { name: "one-too-many" }), 409))
      .toBe("SNAPSHOT_LIMIT_REACHED")
    expect(await snapshotNames(browser, vpsId)).toEqual(["before-upgrade", "after-upgrade"])
  })

  it("a deleted snapshot answers 204, is gone, and frees a place under the limit", async () => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    for (const name of ["before-upgrade", "after-upgrade"]) await browser.post(`/api/vps/${vpsId}/snapshots`, { name })
    const deleted = await browser.delete(`/api/vps/${vpsId}/snapshots/before-upgrade`)
    expect(deleted.status).toBe(204)
    expect(await snapshotNames(browser, vpsId)).toEqual(["after-upgrade"])
    expect((await browser.post(`/api/vps/${vpsId}/snapshots`, { name: "third" })).status).toBe(201)
    expect(errorCode(await browser.delete(`/api/vps/${vpsId}/snapshots/before-upgrade`), 404)).toBe("SNAPSHOT_NOT_FOUND")
  })

  it.each([
    ["starting with a digit", "1st"],
    ["with a space", "has space"],
    ["with a dot", "dot.ted"],
    ["of 41 characters", "a".repeat(41)],
    ["with the reserved final- prefix", "final-202601010000"]
  ])("a name %s answers 422 INVALID_SNAPSHOT_NAME and takes nothing", async (_label, name) => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    expect(errorCode(await browser.post(`/api/vps/${vpsId}/snapshots`, { name }), 422)).toBe("INVALID_SNAPSHOT_NAME")
    expect(await snapshotNames(browser, vpsId)).toEqual([])
  })
})

describe("the console", () => {
  it("logs in with the order's root password and exchanges bytes with the shell", async () => {
    const browser = await customer()
    const { rootPassword, vpsId } = await provisionedVps(browser, "web-1")
    const terminal = await ownerConsole(server, browser, vpsId)
    await terminal.logIn("root", rootPassword)
    await terminal.until("root@web-1:~# ")
    terminal.type("echo hello-console\r")
    await terminal.until("\r\nhello-console\r\n")
    expect(terminal.binaryFrames.length).toBeGreaterThan(0)
    expect(terminal.binaryFrames.every((binary) => binary)).toBe(true)
    await terminal.close()
  })

  it("the shell sees the size sent in a resize frame", async () => {
    const browser = await customer()
    const { rootPassword, vpsId } = await provisionedVps(browser, "web-1")
    const terminal = await ownerConsole(server, browser, vpsId)
    terminal.resize(132, 43)
    await terminal.logIn("root", rootPassword)
    await terminal.until("root@web-1:~# ")
    terminal.type("stty size\r")
    await terminal.until("\r\n43 132\r\n")
    terminal.resize(100, 30)
    terminal.type("stty size\r")
    await terminal.until("\r\n30 100\r\n")
    await terminal.close()
  })

  it("a root password reset through the API opens the console; the old one no longer does", async () => {
    const browser = await customer()
    const { rootPassword, vpsId } = await provisionedVps(browser, "web-1")
    const reset = expectBody(await browser.post(`/api/vps/${vpsId}/reset-password`), 200, Envelopes.rootPassword)
    expect(reset.rootPassword).not.toBe(rootPassword)
    expect(reset.appliesAtNextBoot).toBe(false)
    const terminal = await ownerConsole(server, browser, vpsId)
    await terminal.logIn("root", rootPassword)
    await terminal.until("Login incorrect")
    await terminal.logIn("root", reset.rootPassword)
    await terminal.until("root@web-1:~# ")
    await terminal.close()
  })

  it("a root password reset on a stopped VPS applies at its next start", async () => {
    const browser = await customer()
    const { vpsId } = await provisionedVps(browser, "web-1")
    expect((await browser.post(`/api/vps/${vpsId}/stop`)).status).toBe(200)
    const reset = expectBody(await browser.post(`/api/vps/${vpsId}/reset-password`), 200, Envelopes.rootPassword)
    expect(reset.appliesAtNextBoot).toBe(true)
    expect((await browser.post(`/api/vps/${vpsId}/start`)).status).toBe(200)
    const terminal = await ownerConsole(server, browser, vpsId)
    await terminal.logIn("root", reset.rootPassword)
    await terminal.until("root@web-1:~# ")
    await terminal.close()
  })

  it("an open console is closed when the VPS is suspended", async () => {
    const browser = await customer()
    const { subscriptionId, vpsId } = await provisionedVps(browser, "web-1")
    const terminal = await ownerConsole(server, browser, vpsId)
    terminal.type("\r")
    await terminal.until("login: ")
    await lapse(server, subscriptionId, minutesAgo(5))
    expect(await Promise.race([terminal.closed.then(() => "closed"), sleep(STATE_WAIT_MS).then(() => "still open")]))
      .toBe("closed")
  })
})

describe("the subscription's life", () => {
  it("a lapsed subscription suspends the VPS, which then refuses power, snapshots, password resets and the console", async () => {
    const browser = await customer()
    const { subscriptionId, vpsId } = await provisionedVps(browser, "web-1")
    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    // The VPS record is marked first, its subscription a moment later (in the same lapse).
    await waitFor("the subscription to be suspended", async () =>
      (await subscriptionStatus(browser, subscriptionId)) === "suspended" ? true : undefined)
    expect((expectBody(await browser.get(`/api/vps/${vpsId}`), 200, Envelopes.vps)).vps.graceUntil).toBeDefined()
    for (const action of ["start", "stop", "reset", "reset-password"]) {
      expect(errorCode(await browser.post(`/api/vps/${vpsId}/${action}`), 409), action).toBe("VPS_SUSPENDED")
    }
    expect(errorCode(await browser.get(`/api/vps/${vpsId}/snapshots`), 409)).toBe("VPS_SUSPENDED")
    expect(errorCode(await browser.post(`/api/vps/${vpsId}/snapshots`, { name: "rescue" }), 409)).toBe("VPS_SUSPENDED")
    const attempt = await openConsole(server, vpsId, scan, panelHeaders(browser))
    expect(attempt).toMatchObject({ _tag: "Refused", status: 409 })
    expect(attempt._tag === "Refused" ? attempt.body : "").toContain("\"VPS_SUSPENDED\"")
  })

  it("renewing a lapsed subscription charges, starts a new month and brings the VPS back running", async () => {
    const browser = await customer()
    const { subscriptionId, vpsId } = await provisionedVps(browser, "web-1")
    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    const before = await charges()
    const { subscription } = expectBody(await browser.post(`/api/subscriptions/${subscriptionId}/renew`), 200, Envelopes.subscription)
    expect((await charges()).slice(before.length)).toEqual([expect.objectContaining({ amount: 600, description: "VPS S, renewal" })])
    expect(subscription.status).toBe("active")
    expect(new Date(subscription.currentPeriodEnd).getTime()).toBeGreaterThan(Date.now() + 27 * 24 * 3600_000)
    const { vps } = expectBody(await browser.get(`/api/vps/${vpsId}`), 200, Envelopes.vps)
    expect(vps.status).toBe("running")
    expect(vps).not.toHaveProperty("graceUntil")
    expect((await browser.post(`/api/vps/${vpsId}/stop`)).status).toBe(200)
  })

  it("a renewal the card's bank will not take while the customer is away answers 402 and leaves the VPS suspended", async () => {
    const browser = await customer()
    // This card pays on the page (its holder approves) but always asks again: an off-session renewal cannot use it.
    const { subscriptionId, vpsId } = await provisionedVps(browser, "web-1", undefined, "4000002760003184")
    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    expect(errorCode(await browser.post(`/api/subscriptions/${subscriptionId}/renew`), 402)).toBe("PAYMENT_AUTHENTICATION_REQUIRED")
    // The VPS record is marked first, its subscription a moment later (in the same lapse).
    await waitFor("the subscription to be suspended", async () =>
      (await subscriptionStatus(browser, subscriptionId)) === "suspended" ? true : undefined)
    expect(await vpsStatus(browser, vpsId)).toBe("suspended")
  })

  it("two renewals at the same time charge once and extend the period once", async () => {
    const browser = await customer()
    const { subscriptionId } = await provisionedVps(browser, "web-1")
    const before = await charges()
    const replies = await Promise.all([1, 2].map(() => browser.post(`/api/subscriptions/${subscriptionId}/renew`)))
    const ends = replies.map((r) => expectBody(r, 200, Envelopes.subscription).subscription.currentPeriodEnd)
    expect((await charges()).length - before.length).toBe(1)
    expect(new Set(ends).size).toBe(1)
  })

  it("cancelling keeps the VPS running until the period end, and a renewal takes the cancellation back", async () => {
    const browser = await customer()
    const { subscriptionId, vpsId } = await provisionedVps(browser, "web-1")
    const cancelled = expectBody(await browser.post(`/api/subscriptions/${subscriptionId}/cancel`), 200, Envelopes.subscription)
    expect(cancelled.subscription).toMatchObject({ status: "active", cancelAtPeriodEnd: true })
    expect(await vpsStatus(browser, vpsId)).toBe("running")
    const renewed = expectBody(await browser.post(`/api/subscriptions/${subscriptionId}/renew`), 200, Envelopes.subscription)
    expect(renewed.subscription).toMatchObject({ status: "active", cancelAtPeriodEnd: false })
  })

  it("after a renewal, a second lapse suspends the VPS again", async () => {
    const browser = await customer()
    const { subscriptionId, vpsId } = await provisionedVps(browser, "web-1")
    await lapse(server, subscriptionId, minutesAgo(10))
    await waitForVpsStatus(browser, vpsId, "suspended")
    expect((await browser.post(`/api/subscriptions/${subscriptionId}/renew`)).status).toBe(200)
    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    // The VPS record is marked first, its subscription a moment later (in the same lapse).
    await waitFor("the subscription to be suspended", async () =>
      (await subscriptionStatus(browser, subscriptionId)) === "suspended" ? true : undefined)
  })

  it("past its grace window a suspended VPS is destroyed and its address goes back to the pool", async () => {
    const browser = await customer()
    const { order, subscriptionId, vps, vpsId } = await provisionedVps(browser, "web-1")
    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    const freeBefore = await freeAddresses(server)
    await server.runtime.runPromise(Effect.flatMap(VpsRecords, (r) => r.setStatus(vpsId, "suspended", { graceUntil: minutesAgo(1) })))
    await sweep(server)
    await waitForVpsStatus(browser, vpsId, "destroyed")
    expect(await subscriptionStatus(browser, subscriptionId)).toBe("terminated")
    expect(expectBody(await browser.get("/api/vps"), 200, Envelopes.vpsList).vps).toEqual([])
    expect(errorCode(await browser.post(`/api/vps/${vpsId}/start`), 409)).toBe("VPS_DESTROYED")
    expect(errorCode(await browser.post(`/api/subscriptions/${subscriptionId}/renew`), 409)).toBe("SUBSCRIPTION_ENDED")
    expect(await server.runtime.runPromise(Effect.flatMap(IpAddresses, (a) => a.held(order.id)))).toBeUndefined()
    expect(await freeAddresses(server)).toBe(freeBefore + 1)
    expect(await isReassignable(server, vps.address)).toBe(true)
  })
})

describe("one VPS from order to destruction", () => {
  it("orders, runs, powers, snapshots, talks over the console, lapses, comes back, lapses again and is destroyed", async () => {
    const browser = await customer()
    const { order, rootPassword, subscriptionId, vps, vpsId } = await provisionedVps(browser, "web-1")
    for (const [action, status] of [["stop", "stopped"], ["start", "running"], ["reset", "running"]] as const) {
      expect(expectBody(await browser.post(`/api/vps/${vpsId}/${action}`), 200, Envelopes.vps).vps.status).toBe(status)
    }
    expect((await browser.post(`/api/vps/${vpsId}/snapshots`, { name: "before-upgrade" })).status).toBe(201)
    const first = await ownerConsole(server, browser, vpsId)
    await first.logIn("root", rootPassword)
    await first.until("root@web-1:~# ")
    first.type("echo hello-console\r")
    await first.until("\r\nhello-console\r\n")
    await first.close()

    await lapse(server, subscriptionId, minutesAgo(10))
    await waitForVpsStatus(browser, vpsId, "suspended")
    expect((await browser.post(`/api/subscriptions/${subscriptionId}/renew`)).status).toBe(200)
    expect(await vpsStatus(browser, vpsId)).toBe("running")
    // The restart that brought it back logged the console out; the same password still opens it.
    const again = await ownerConsole(server, browser, vpsId)
    await again.logIn("root", rootPassword)
    await again.until("root@web-1:~# ")
    await again.close()

    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    await server.runtime.runPromise(Effect.flatMap(VpsRecords, (r) => r.setStatus(vpsId, "suspended", { graceUntil: minutesAgo(1) })))
    await sweep(server)
    await waitForVpsStatus(browser, vpsId, "destroyed")
    expect(await subscriptionStatus(browser, subscriptionId)).toBe("terminated")
    expect(await server.runtime.runPromise(Effect.flatMap(IpAddresses, (a) => a.held(order.id)))).toBeUndefined()
    expect(await isReassignable(server, vps.address)).toBe(true)
  })
})
