// Server processes on one PostgreSQL selling VPS on a sandbox Proxmox the test runs ("lab", registered through
// CATALOG_FILE), for tests of several instances: which instance runs a workflow is told by the Proxmox ticket it
// signs in with (each instance signs in on its own).
import { fillBillingProfile, payOrder } from "../support/checkout.ts"
import { Effect, Exit, Scope } from "effect"
import { randomBytes } from "node:crypto"
import { sandboxStripe } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { expect } from "vitest"
import { type SandboxProxmox, sandboxProxmox } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { startScoped } from "../support/startScoped.ts"
import { Browser } from "../support/browser.ts"
import { createDatabase, type Env, run, type Server, startServer, tempDir } from "./processes.ts"

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7uLQ2QJEVpMZ8wYJfEq1v7rJ9l3cQxYwZ0Yt3JmK4N ada@example.com"

export interface OrderBody {
  readonly id: string
  readonly status: string
  readonly progress: { readonly step: number; readonly total: number; readonly name: string }
  readonly serviceId?: string
  readonly failureReason?: string
}

/** A catalog file's content making `url` (a sandbox Proxmox the test runs) the real cluster "lab", with one VPS plan. */
export const labCatalog = (url: string, cidr = "198.51.100.0/28") => ({
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
  ipPools: [{ id: "lab-public", cluster: "lab", cidr, gateway: cidr.replace(/\.0\/\d+$/, ".1"), bridge: "vmbr0", nodes: ["pve1", "pve2"] }],
  pterodactyl: [],
  plans: [{ id: "vps-s", kind: "vps", name: "VPS S", priceCents: 500, vcpu: 1, ramMiB: 1024, diskGiB: 20, templates: ["debian-12"], snapshotLimit: 2 }]
})

/** A customer registered and signed in through `url`. */
export const signIn = async (url: string, label = "lab") => {
  const browser = new Browser(url)
  const email = `${label}.${Date.now()}.${randomBytes(3).toString("hex")}@example.com`
  const account = { email, password: "correct horse battery", accountType: "personal", firstName: "Ada", lastName: "Lovelace" }
  expect((await browser.post("/api/auth/register", account)).status).toBe(201)
  expect((await browser.post("/api/auth/login", { email, password: account.password, rememberMe: true })).status).toBe(200)
  await fillBillingProfile(browser)
  return browser
}

/** The same customer's session on another instance. */
export const sameSession = (browser: Browser, url: string) => {
  const other = new Browser(url)
  for (const [name, value] of browser.cookies) other.cookies.set(name, value)
  return other
}

export const orderOf = async (browser: Browser, id: string) => {
  const reply = await browser.get(`/api/orders/${id}`)
  expect(reply.status, reply.text).toBe(200)
  return reply.body as OrderBody
}

export const placeVps = async (browser: Browser, hostname: string) => {
  const placed = await browser.post("/api/orders", { planId: "vps-s", expressStartConsent: true, options: { templateId: "debian-12", hostname, sshPublicKey: SSH_KEY } })
  expect(placed.status, placed.text).toBe(201)
  const order = (placed.body as { order: OrderBody & { readonly checkoutUrl?: string } }).order
  await payOrder(browser, order)
  return order.id
}

/** Follows the order until it completes or fails (within `ms`). */
export const settled = async (browser: Browser, id: string, ms = 60_000, servers: ReadonlyArray<Server> = []) => {
  for (const until = Date.now() + ms; ;) {
    const order = await orderOf(browser, id)
    if (order.status === "completed" || order.status === "failed") return order
    if (Date.now() > until) {
      throw new Error(`order not settled: ${JSON.stringify(order)}\n${servers.map((s) => s.stdout() + s.stderr()).join("\n")}`)
    }
    await sleep(50)
  }
}

/** The Proxmox ticket a recorded request was made with. */
export const ticketOf = (request: { readonly headers: Readonly<Record<string, string>> }) => request.headers["cookie"] ?? ""

export interface Lab {
  readonly sandbox: SandboxProxmox
  readonly servers: ReadonlyArray<Server>
  /** The same customer signed in on each server, in order. */
  readonly customers: ReadonlyArray<Browser>
  /** The Proxmox ticket each server signs in with, in order. */
  readonly tickets: ReadonlyArray<string>
  /** Which server made a recorded request (-1: none of them). */
  readonly serverOf: (request: { readonly headers: Readonly<Record<string, string>> }) => number
  readonly close: () => Promise<void>
}

/**
 * A sandbox Proxmox (`taskDurations` as SandboxProxmoxOptions), a fresh database migrated once, and `count` server
 * processes on it started with the same settings (`env` added) — only their HTTP PORT differs, as it must on one
 * machine. A first VPS, ordered and completed, makes each server sign in and show its ticket (its snapshots are read
 * live through each one).
 */
export const startLab = async (options: {
  readonly adminUrl: string
  readonly count: number
  readonly taskDurations: Partial<Record<string, number>>
  readonly cidr?: string
  readonly env?: Env
}): Promise<Lab> => {
  const closing: Array<() => Promise<unknown>> = []
  const close = async () => {
    for (const step of closing.splice(0).reverse()) await step()
  }
  try {
    const sandbox = await startScoped(sandboxProxmox({ taskDurations: options.taskDurations }))
    closing.push(() => sandbox.close())
    const db = await createDatabase(options.adminUrl)
    closing.push(db.drop)
    const dir = await tempDir("lab")
    const catalogFile = join(dir, "catalog.json")
    await writeFile(catalogFile, JSON.stringify(labCatalog(sandbox.url, options.cidr)))
    const env: Env = {
      NODE_ENV: "development",
      DATABASE_URL: db.url,
      DATA_DIR: dir,
      JWT_SECRET: randomBytes(48).toString("base64url"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BCRYPT_COST: "4",
      CATALOG_FILE: catalogFile,
      ...options.env
    }
    // One sandbox Stripe for every instance (each would otherwise run its own and know only its own customers).
    const stripeScope = Effect.runSync(Scope.make())
    closing.push(() => Effect.runPromise(Scope.close(stripeScope, Exit.void)))
    const stripe = await Effect.runPromise(Scope.provide(stripeScope)(sandboxStripe({ webhooks: { initialRetryDelayMs: 100, maxRetryDelayMs: 2_000 } })))
    env["STRIPE_API_URL"] = stripe.baseUrl
    const migrated = await run("app/cli.ts", ["migrate"], env)
    expect(migrated.code, migrated.stderr).toBe(0)
    const webhookSecret = `whsec_lab_${randomBytes(12).toString("hex")}`
    for (const [name, value] of [["stripe:secret-key", stripe.secretKey], ["stripe:webhook-secret", webhookSecret]] as const) {
      const stored = await run("app/cli.ts", ["secrets", "put", name, "--from-env", "LAB_SECRET"], { ...env, LAB_SECRET: value })
      expect(stored.code, stored.stderr).toBe(0)
    }
    const servers = await Promise.all(Array.from({ length: options.count }, () => startServer(env)))
    for (const server of servers) {
      await Effect.runPromise(stripe.control.registerWebhook(`${server.url}/api/payments/stripe/webhook`, { secret: webhookSecret }))
    }
    const first = await signIn(servers[0]!.url)
    const customers = servers.map((server, i) => i === 0 ? first : sameSession(first, server.url))
    // Each instance signs in to Proxmox a second apart (an order left unpaid asks the cluster for room, and reserves
    // nothing): a PVE ticket is the user and the second it was issued, signed, so two instances signing in within one
    // second would hold the same ticket, and the ticket is how the lab tells which instance made an upstream call.
    for (const [i, customer] of customers.entries()) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1_100))
      const unpaid = await customer.post("/api/orders", { planId: "vps-s", expressStartConsent: true, options: { templateId: "debian-12", hostname: `warm-${i}`, sshPublicKey: SSH_KEY } })
      expect(unpaid.status, unpaid.text).toBe(201)
    }
    const vps = await settled(first, await placeVps(first, "lab-0"), 60_000, servers)
    expect(vps.status, vps.failureReason).toBe("completed")
    const tickets: Array<string> = []
    for (const customer of customers) {
      const since = sandbox.control.requests().length
      expect((await customer.get(`/api/vps/${vps.serviceId}/snapshots`)).status).toBe(200)
      const read = sandbox.control.requests().slice(since).find((r) => r.method === "GET" && /\/snapshot$/.test(r.path))
      tickets.push(ticketOf(read!))
    }
    expect(new Set(tickets).size).toBe(options.count)
    return { sandbox, servers, customers, tickets, serverOf: (request) => tickets.indexOf(ticketOf(request)), close }
  } catch (error) {
    await close()
    throw error
  }
}
