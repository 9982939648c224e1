// The customer's side of a VPS order over the HTTP API (POST /api/orders, then GET /api/orders/:id until it
// settles), and the server's own timestamps of each order, read from its database.
import { Schema } from "effect"
import { payCheckout } from "./checkout.ts"
import { generateKeyPairSync } from "node:crypto"
import { performance } from "node:perf_hooks"
import { OrderView } from "../adapters/http/views.ts"
import { psql } from "./system.ts"

export interface Customer {
  readonly url: string
  /** `zh_token=…` */
  readonly cookie: string
}

export type Order = typeof OrderView.Type

const decodeOrder = Schema.decodeUnknownSync(OrderView)
const decodePlaced = Schema.decodeUnknownSync(Schema.Struct({ order: OrderView }))

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A valid OpenSSH ed25519 public key line (RFC 4253 §6.6 blob: the type, then the 32-byte key). */
const ed25519PublicKey = () => {
  const raw = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32)
  const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes])
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(raw)]).toString("base64")} bench@zh`
}

const SSH_KEY = ed25519PublicKey()

const json = async (response: Response, expected: number, what: string): Promise<unknown> => {
  const text = await response.text()
  if (response.status !== expected) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

export interface Placed {
  readonly id: string
  /** performance.now() just before the POST was sent. */
  readonly sentAt: number
}

/** Orders a VPS S on Debian 12 and pays it on its checkout page; resolves once paid there, with when it was sent. */
export const placeOrder = async (customer: Customer, hostname: string): Promise<Placed> => {
  const sentAt = performance.now()
  const response = await fetch(`${customer.url}/api/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: customer.cookie },
    body: JSON.stringify({ planId: "vps-s", expressStartConsent: true, options: { templateId: "debian-12", hostname, sshPublicKey: SSH_KEY } }),
    signal: AbortSignal.timeout(60_000)
  })
  const { order } = decodePlaced(await json(response, 201, "POST /api/orders"))
  await payCheckout(order.checkoutUrl)
  return { id: order.id, sentAt }
}

export const readOrder = async (customer: Customer, id: string): Promise<Order> => {
  const response = await fetch(`${customer.url}/api/orders/${id}`, {
    headers: { cookie: customer.cookie },
    signal: AbortSignal.timeout(30_000)
  })
  return decodeOrder(await json(response, 200, `GET /api/orders/${id}`))
}

export const isSettled = (order: Order) => order.status === "completed" || order.status === "failed"

export interface Followed {
  /** The first read that showed the order settled: the only one that carries the root password. */
  readonly order: Order
  /** performance.now() when that read answered. */
  readonly settledAt: number
  readonly reads: number
}

/** Reads the order every `pollMs` until it completed or failed; the settling is seen at most `pollMs` late. */
export const followOrder = async (customer: Customer, id: string, pollMs: number, timeoutMs: number): Promise<Followed> => {
  const deadline = performance.now() + timeoutMs
  for (let reads = 1;; reads++) {
    const order = await readOrder(customer, id)
    if (isSettled(order)) return { order, settledAt: performance.now(), reads }
    if (performance.now() > deadline) throw new Error(`order ${id} still ${order.status} (${order.progress.name}) after ${timeoutMs} ms`)
    await sleep(pollMs)
  }
}

export interface ServerTimes {
  readonly status: string
  /** From the order's creation to its last update (completion or failure), by the server's clock. */
  readonly ms: number
  readonly failureReason: string
}

const UUID = /^[0-9a-f-]{36}$/

/** The server's own record of each order: created_at → updated_at, which `complete`/`fail` set last. */
export const serverTimes = async (databaseUrl: string, ids: ReadonlyArray<string>): Promise<Map<string, ServerTimes>> => {
  if (ids.length === 0 || !ids.every((id) => UUID.test(id))) throw new Error("order ids must be UUIDs")
  const rows = await psql(
    databaseUrl,
    `SELECT id, status, round(extract(epoch FROM updated_at - created_at) * 1000, 3), coalesce(failure_reason, '')
       FROM orders WHERE id IN (${ids.map((id) => `'${id}'`).join(", ")})`
  )
  const times = new Map<string, ServerTimes>()
  for (const row of rows.split("\n").filter((r) => r !== "")) {
    const [id = "", status = "", ms = "", ...reason] = row.split("|")
    times.set(id, { status, ms: Number(ms), failureReason: reason.join("|") })
  }
  return times
}
