// GET /api/payments: the customer's charges and refunds as the ledger records them, on a sandbox server.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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

  it("signed out: 401", async () => {
    expect((await new Browser(server.url).get("/api/payments")).status).toBe(401)
  })
})
