// What the VPS end-to-end suites share: a browser whose every reply is scanned for upstream secrets, a customer,
// an order followed to its end, the console WebSocket, and the lifecycle moved on through the server's own ports.
import { Effect, Option, Schema } from "effect"
import { generateKeyPairSync, randomUUID } from "node:crypto"
import { expect } from "vitest"
import WebSocket from "ws"
import { ErrorBody, OrderView, SnapshotView, SubscriptionView, VpsView } from "../../adapters/http/views.ts"
import { SANDBOX_CLUSTER } from "../../app/sandbox/SandboxUpstreams.ts"
import { sweepLifecycle } from "../../domain/billing/sweepLifecycle.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { IpAddresses } from "../../ports/IpAddresses.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Browser, type Reply } from "./browser.ts"
import { fillBillingProfile, paid } from "./checkout.ts"
import type { startTestServer } from "./testServer.ts"

export type TestServer = Awaited<ReturnType<typeof startTestServer>>

/** Every wait of these suites is bounded; a console marker or a state change comes well within these. */
export const CONSOLE_WAIT_MS = 5_000
export const STATE_WAIT_MS = 20_000

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `probe` until it answers something, or fails after `timeoutMs`. */
export const waitFor = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = STATE_WAIT_MS): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(25)
  }
}

// --- the leak scanner --------------------------------------------------------------------------------------------

/** Fails when `text` (a reply, a console frame) shows anything of the hypervisor: its address, tickets, task ids. */
export type LeakScanner = (where: string, text: string) => void

/** What must never reach a customer: the sandbox Proxmox's host:port, its auth cookie, console tickets and UPIDs. */
export const upstreamMarkers = (proxmoxUrl: string): ReadonlyArray<string> => [
  new URL(proxmoxUrl).host,
  "PVEAuthCookie",
  "PVEVNC",
  "UPID:"
]

export const scannerFor = (markers: ReadonlyArray<string>): LeakScanner => (where, text) => {
  const lower = text.toLowerCase()
  for (const marker of markers) {
    if (lower.includes(marker.toLowerCase())) {
      throw new Error(`${where} shows the upstream's ${JSON.stringify(marker)}: ${text.slice(0, 500)}`)
    }
  }
}

/** One scanner that fails wherever any of `scanners` would (a server's Proxmox and its game panel, say). */
export const allOf = (...scanners: ReadonlyArray<LeakScanner>): LeakScanner => (where, text) => {
  for (const scan of scanners) scan(where, text)
}

/** The scanner for this server's sandbox Proxmox, whose URL the catalog holds. */
export const leakScanner = async (server: TestServer): Promise<LeakScanner> => {
  const cluster = await server.runtime.runPromise(Effect.flatMap(Catalog, (c) => c.cluster(SANDBOX_CLUSTER)))
  return scannerFor(upstreamMarkers(Option.getOrThrow(cluster).url))
}

/** A browser that passes every reply, headers included, through the scanner. */
export class ScannedBrowser extends Browser {
  readonly scan: LeakScanner
  constructor(baseUrl: string, scan: LeakScanner) {
    super(baseUrl)
    this.scan = scan
  }

  override async request(method: string, path: string, options: Parameters<Browser["request"]>[2] = {}): Promise<Reply> {
    const reply = await super.request(method, path, options)
    const headers = [...reply.headers].map(([name, value]) => `${name}: ${value}`).join("\n")
    this.scan(`${method} ${path} (${reply.status})`, `${headers}\n\n${reply.text}`)
    return reply
  }

  delete(path: string) {
    return this.request("DELETE", path)
  }
}

// --- replies -----------------------------------------------------------------------------------------------------

const decode = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, reply: Reply): S["Type"] => {
  const result = Schema.decodeUnknownExit(schema)(reply.body)
  if (result._tag === "Failure") throw new Error(`unexpected body (${reply.status}): ${reply.text}`)
  return result.value
}

export const Envelopes = {
  order: Schema.Struct({ order: OrderView }),
  vps: Schema.Struct({ vps: VpsView }),
  vpsList: Schema.Struct({ vps: Schema.Array(VpsView) }),
  snapshots: Schema.Struct({ snapshots: Schema.Array(SnapshotView) }),
  subscription: Schema.Struct({ subscription: SubscriptionView }),
  subscriptions: Schema.Struct({ subscriptions: Schema.Array(SubscriptionView) }),
  rootPassword: Schema.Struct({ rootPassword: Schema.String, appliesAtNextBoot: Schema.Boolean }),
  error: Schema.Struct({ error: ErrorBody })
} as const

/** The body of a reply with the expected status, decoded; anything else fails with the reply's text. */
export const expectBody = <S extends Schema.Top & { readonly DecodingServices: never }>(
  reply: Reply,
  status: number,
  schema: S
): S["Type"] => {
  expect(reply.status, reply.text).toBe(status)
  return decode(schema, reply)
}

/** The error code of a reply with the expected status. */
export const errorCode = (reply: Reply, status: number) => expectBody(reply, status, Envelopes.error).error.code

// --- customers and orders ----------------------------------------------------------------------------------------

/** A valid OpenSSH ed25519 public key line (RFC 4253 §6.6 blob: the type, then the 32-byte key). */
export const ed25519PublicKey = (comment = "ada@laptop") => {
  const raw = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32)
  const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes])
  const blob = Buffer.concat([field(Buffer.from("ssh-ed25519")), field(raw)])
  return `ssh-ed25519 ${blob.toString("base64")} ${comment}`
}

/** A freshly registered, signed-in customer, with a French billing profile (so they can order) unless told not to. */
export const signedInCustomer = async (
  server: TestServer,
  scan: LeakScanner,
  label = "customer",
  options: {
    readonly billingProfile?: boolean
    /** What the registration says otherwise (a professional account: `accountType`, `siret`, names). */
    readonly account?: Readonly<Record<string, string>>
  } = {}
) => {
  const browser = new ScannedBrowser(server.url, scan)
  const email = `${label}.${randomUUID()}@example.com`
  const password = "correct horse battery"
  const registered = await browser.post("/api/auth/register", {
    email,
    password,
    accountType: "personal",
    firstName: "Ada",
    lastName: "Lovelace",
    ...options.account
  })
  expect(registered.status, registered.text).toBe(201)
  const login = await browser.post("/api/auth/login", { email, password, rememberMe: false })
  expect(login.status, login.text).toBe(200)
  if (options.billingProfile !== false) await fillBillingProfile(browser)
  return browser
}

/** Which plan and OS template a VPS is ordered on: the sandbox's VPS S on Debian 12 unless said otherwise. */
export interface VpsChoice {
  readonly planId: string
  readonly templateId: string
}
const VPS_S: VpsChoice = { planId: "vps-s", templateId: "debian-12" }

/** The body of `POST /api/orders` for a VPS S on Debian 12 (or `choice`) called `hostname`. */
export const vpsOrder = (hostname: string, choice: VpsChoice = VPS_S) => ({
  planId: choice.planId,
  // The tests' customers are consumers: they ask for the service to start at once (issue 13 §3).
  expressStartConsent: true,
  options: { templateId: choice.templateId, hostname, sshPublicKey: ed25519PublicKey() }
})

type Order = typeof OrderView.Type
export type ProgressStep = Pick<Order, "status"> & Order["progress"]

/** Orders a VPS (S unless `choice` says) and follows it to its end: the completed order (first read) and the progress steps seen. */
export const orderVps = async (browser: ScannedBrowser, hostname: string, choice: VpsChoice = VPS_S, card?: string) => {
  const placed = expectBody(await browser.post("/api/orders", vpsOrder(hostname, choice)), 201, Envelopes.order).order
  await paid(placed, card)
  const steps: Array<ProgressStep> = []
  const finished = await waitFor(`order ${placed.id} to finish`, async () => {
    const order = expectBody(await browser.get(`/api/orders/${placed.id}`), 200, OrderView)
    const last = steps.at(-1)
    if (last === undefined || last.step !== order.progress.step || last.status !== order.status) {
      steps.push({ status: order.status, ...order.progress })
    }
    return order.status === "completed" || order.status === "failed" ? order : undefined
  })
  return { placed, order: finished, steps }
}

/** A customer's running VPS, provisioned through the API, with the root password shown on the completed order. */
export const provisionedVps = async (browser: ScannedBrowser, hostname: string, choice: VpsChoice = VPS_S, card?: string) => {
  const { order } = await orderVps(browser, hostname, choice, card)
  expect(order.status, order.failureReason).toBe("completed")
  const vpsId = order.serviceId
  const rootPassword = order.rootPassword
  if (vpsId === undefined || rootPassword === undefined || order.subscriptionId === undefined) {
    throw new Error(`a completed order names its VPS, subscription and root password: ${JSON.stringify(order)}`)
  }
  const vps = expectBody(await browser.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps
  return { order, vps, vpsId, rootPassword, subscriptionId: order.subscriptionId }
}

export const vpsStatus = async (browser: ScannedBrowser, vpsId: string) =>
  expectBody(await browser.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps.status

/** Waits until the VPS shows `status` over the API. */
export const waitForVpsStatus = (browser: ScannedBrowser, vpsId: string, status: typeof VpsView.Type["status"]) =>
  waitFor(`VPS ${vpsId} to be ${status}`, async () => ((await vpsStatus(browser, vpsId)) === status ? true : undefined))

// --- time, through the server's own ports ------------------------------------------------------------------------

/** Ends the subscription's period at `at` (in the past: it lapsed) and runs one lifecycle sweep, as the cron would. */
export const lapse = (server: TestServer, subscriptionId: string, at: Date) =>
  server.runtime.runPromise(Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    const current = Option.getOrThrow(yield* subscriptions.get(subscriptionId))
    if (!(yield* subscriptions.extend(subscriptionId, current.currentPeriodEnd, at))) {
      return yield* Effect.die(new Error(`subscription ${subscriptionId} could not be moved`))
    }
    yield* sweepLifecycle
  }))

export const sweep = (server: TestServer) => server.runtime.runPromise(sweepLifecycle)

/** Free addresses of the sandbox pool, as the catalog counts them. */
export const freeAddresses = async (server: TestServer) => {
  const pools = await server.runtime.runPromise(Effect.flatMap(Catalog, (c) => c.ipPools))
  return pools.filter((p) => p.cluster === SANDBOX_CLUSTER).reduce((sum, p) => sum + p.free, 0)
}

/**
 * Whether `address` can be assigned again: new holders take the lowest free addresses first, so probing holders
 * reach it after at most the free addresses below it. Every probe is released afterwards.
 */
export const isReassignable = (server: TestServer, address: string) =>
  server.runtime.runPromise(Effect.gen(function*() {
    const addresses = yield* IpAddresses
    const pools = (yield* (yield* Catalog).ipPools).filter((p) => p.cluster === SANDBOX_CLUSTER).map((p) => p.id)
    const probes: Array<string> = []
    let found = false
    for (let i = 0; i < 253 && !found; i++) {
      const holder = `probe-${randomUUID()}`
      const assigned = yield* Effect.result(addresses.assign(holder, pools))
      if (assigned._tag === "Failure") break
      probes.push(holder)
      found = assigned.success.address === address
    }
    for (const holder of probes) yield* addresses.release(holder)
    return found
  }))

// --- the console -------------------------------------------------------------------------------------------------

/** The panel's public origin in the test settings: the only Origin the console accepts. */
export const PANEL_ORIGIN = "http://panel.test"

export interface ConsoleHeaders {
  readonly origin?: string
  readonly cookie?: string
}

/** The `Cookie` header carrying the browser's session. */
export const sessionCookie = (browser: Browser) => `zh_token=${browser.cookies.get("zh_token") ?? ""}`

/** What the panel's page sends when it opens the console of the signed-in customer. */
export const panelHeaders = (browser: Browser): ConsoleHeaders => ({ origin: PANEL_ORIGIN, cookie: sessionCookie(browser) })

export type ConsoleAttempt =
  | { readonly _tag: "Open"; readonly session: ConsoleSession }
  | { readonly _tag: "Refused"; readonly status: number; readonly body: string }

/** An open console WebSocket, read as text: `until(marker)` waits for the next `marker`. */
export class ConsoleSession {
  readonly ws: WebSocket
  readonly scan: LeakScanner
  output = ""
  consumed = 0
  readonly binaryFrames: Array<boolean> = []
  /** The first frame that showed something of the upstream: `until` and `close` fail with it. */
  leak: unknown = undefined
  readonly closed: Promise<number>

  constructor(ws: WebSocket, scan: LeakScanner) {
    this.ws = ws
    this.scan = scan
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      const text = data.toString("utf8")
      try {
        this.scan("a console frame", text)
      } catch (e) {
        this.leak ??= e
      }
      this.binaryFrames.push(isBinary)
      this.output += text
    })
    this.closed = new Promise((resolve) => ws.once("close", (code: number) => resolve(code)))
  }

  private checkLeaks() {
    if (this.leak !== undefined) throw this.leak
  }

  /** The text from the last marker read up to and including the next `marker`. */
  async until(marker: string, timeoutMs = CONSOLE_WAIT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      this.checkLeaks()
      const at = this.output.indexOf(marker, this.consumed)
      if (at >= 0) {
        const text = this.output.slice(this.consumed, at + marker.length)
        this.consumed = at + marker.length
        return text
      }
      if (Date.now() > deadline) {
        throw new Error(`no ${JSON.stringify(marker)} on the console within ${timeoutMs} ms; it showed ${JSON.stringify(this.output)}`)
      }
      await sleep(10)
    }
  }

  /** Typed input, as terminal bytes in a binary frame. */
  type(text: string) {
    this.ws.send(Buffer.from(text, "utf8"), { binary: true })
  }

  resize(cols: number, rows: number) {
    this.ws.send(JSON.stringify({ type: "resize", cols, rows }), { binary: false })
  }

  /** The getty dialogue: Enter, user, password. */
  async logIn(user: string, password: string) {
    this.type("\r")
    await this.until("login: ")
    this.type(`${user}\r`)
    await this.until("Password: ")
    this.type(`${password}\r`)
  }

  /** Closes from our side and waits for the close handshake (bounded). */
  async close() {
    this.ws.close(1000, "done")
    await Promise.race([this.closed, sleep(CONSOLE_WAIT_MS).then(() => this.ws.terminate())])
    this.checkLeaks()
  }
}

/** Opens `GET /api/vps/:id/console` as a browser would; a refused upgrade answers its HTTP status and body. */
export const openConsole = (server: TestServer, vpsId: string, scan: LeakScanner, headers: ConsoleHeaders) =>
  new Promise<ConsoleAttempt>((resolve, reject) => {
    const url = `${server.url.replace(/^http/, "ws")}/api/vps/${vpsId}/console`
    const ws = new WebSocket(url, {
      headers: {
        ...(headers.origin === undefined ? {} : { Origin: headers.origin }),
        ...(headers.cookie === undefined ? {} : { Cookie: headers.cookie })
      },
      handshakeTimeout: CONSOLE_WAIT_MS
    })
    const session = new ConsoleSession(ws, scan)
    ws.once("open", () => resolve({ _tag: "Open", session }))
    ws.once("error", reject)
    ws.once("unexpected-response", (request, response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        body += chunk
      })
      response.once("end", () => {
        request.destroy()
        try {
          scan(`the refused console upgrade (${response.statusCode})`, `${JSON.stringify(response.headers)}\n\n${body}`)
          resolve({ _tag: "Refused", status: response.statusCode ?? 0, body })
        } catch (e) {
          reject(e)
        }
      })
    })
  })

/** The owner's console, from the panel's origin with the owner's session cookie. */
export const ownerConsole = async (server: TestServer, browser: ScannedBrowser, vpsId: string) => {
  const attempt = await openConsole(server, vpsId, browser.scan, panelHeaders(browser))
  if (attempt._tag === "Refused") throw new Error(`the console was refused with ${attempt.status}: ${attempt.body}`)
  return attempt.session
}
