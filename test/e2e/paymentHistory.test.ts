// GET /api/payments: the customer's charges and refunds as the ledger records them, on a sandbox server.
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ledger } from "../../ports/Ledger.ts"
import { Browser } from "../support/browser.ts"
import { payOrder } from "../support/checkout.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, signedInCustomer, vpsOrder } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  server = await startTestServer()
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

describe("GET /api/payments", () => {
  it("lists the customer's first-month charge of an order, and only theirs", async () => {
    const scan = await leakScanner(server)
    const alice = await signedInCustomer(server, scan, "alice")
    const bob = await signedInCustomer(server, scan, "bob")
    expect(JSON.parse((await alice.get("/api/payments")).text)).toEqual({ payments: [] })
    const placed = await alice.post("/api/orders", vpsOrder("history-1"))
    expect(placed.status, placed.text).toBe(201)
    const order = (JSON.parse(placed.text) as { readonly order: { readonly id: string; readonly status: string; readonly checkoutUrl?: string } }).order
    const orderId = order.id
    // Nothing is charged until the customer pays on the checkout page and Stripe tells us.
    expect(JSON.parse((await alice.get("/api/payments")).text)).toEqual({ payments: [] })
    await payOrder(alice, order)
    const { payments } = JSON.parse((await alice.get("/api/payments")).text) as {
      readonly payments: ReadonlyArray<Record<string, unknown>>
    }
    expect(payments).toHaveLength(1)
    expect(payments[0]).toMatchObject({ kind: "charge", amountCents: 600, orderId })
    expect(JSON.parse((await bob.get("/api/payments")).text)).toEqual({ payments: [] })
  }, 60_000)

  it("pages with a cursor: `limit` a page, `next` given while older ones remain, each entry once", async () => {
    const carol = await signedInCustomer(server, await leakScanner(server), "carol")
    const me = JSON.parse((await carol.get("/api/auth/me")).text) as { readonly user: { readonly id: string } }
    const base = Date.parse("2026-02-01T10:00:00.000Z")
    const ids = Array.from({ length: 5 }, () => randomUUID())
    await server.runtime.runPromise(Effect.forEach(ids, (id, i) =>
      Effect.flatMap(Ledger, (ledger) =>
        ledger.record({
          id, userId: me.user.id, subscriptionId: null, orderId: null, kind: "charge", amountCents: 100 + i,
          reference: `pi_page_${id}`, createdAt: new Date(base + (i % 3) * 60_000)
        }))))
    const seen: Array<string> = []
    let after: string | undefined
    for (let page = 0; page < 5; page++) {
      const reply = await carol.get(`/api/payments?limit=2${after === undefined ? "" : `&after=${after}`}`)
      expect(reply.status).toBe(200)
      const body = JSON.parse(reply.text) as { readonly payments: ReadonlyArray<{ readonly id: string }>; readonly next?: string }
      seen.push(...body.payments.map((p) => p.id))
      after = body.next
      if (after === undefined) break
    }
    expect(seen).toHaveLength(5)
    expect(new Set(seen)).toEqual(new Set(ids))
    // Without `limit`: one page of up to 100, and no cursor.
    expect(JSON.parse((await carol.get("/api/payments")).text)).not.toHaveProperty("next")
    expect((await carol.get("/api/payments?limit=0")).status).toBe(400)
  }, 60_000)

  it("signed out: 401", async () => {
    expect((await new Browser(server.url).get("/api/payments")).status).toBe(401)
  })
})
