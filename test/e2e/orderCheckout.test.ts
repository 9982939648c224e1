// Orders paid through the sandbox Stripe over real HTTP (issue 12 §2, §5), on a sandbox-mode server: the browser's return
// to the panel alone changes nothing; Stripe's webhooks delivered five times each and out of order take effect once;
// 100 orders placed and paid at the same time → 100 paid, 100 provisioned, no PaymentIntent charged twice.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrderView } from "../../adapters/http/views.ts"
import type { SandboxStripe } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import { fillBillingProfile, payCheckout, TEST_CARD } from "../support/checkout.ts"
import { sandboxStripe, startTestServer, stripePayments } from "../support/testServer.ts"
import { Envelopes, expectBody, type ScannedBrowser, signedInCustomer, vpsOrder, waitFor } from "../support/vpsHttp.ts"
import { sandboxesLeakScanner } from "../support/gameHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
let stripe: SandboxStripe

beforeAll(async () => {
  server = await startTestServer()
  stripe = await server.runtime.runPromise(sandboxStripe)
}, 120_000)
// The server stops with the hundred provisionings still under way, as at an operator's restart: their workflows are
// handed back (on the embedded database too, test/app/embeddedEngineStop.test.ts) and the next start resumes them.
afterAll(() => server?.stop(), 60_000)

const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)
const count = (query: string) =>
  server.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly n: number }>`${sql.unsafe(query)}`))
    .then((rows) => rows[0]!.n)

const customer = async (label: string) => signedInCustomer(server, await sandboxesLeakScanner(server), label)

const orderGame = async (browser: ScannedBrowser) =>
  expectBody(await browser.post("/api/orders", { planId: "mc-2g", expressStartConsent: true, options: {} }), 201, Envelopes.order).order

const statusOf = async (browser: ScannedBrowser, id: string) => expectBody(await browser.get(`/api/orders/${id}`), 200, OrderView).status

describe("an order paid through the sandbox Stripe over HTTP", () => {
  it("without billing details: 422 BILLING_PROFILE_REQUIRED, no order, no checkout page; filled in, paid TTC and invoiced", async () => {
    const browser = await signedInCustomer(server, await sandboxesLeakScanner(server), "noprofile", { billingProfile: false })
    const eventsBefore = (await run(stripe.control.events)).length
    const refused = expectBody(await browser.post("/api/orders", { planId: "mc-2g", expressStartConsent: true, options: {} }), 422, Envelopes.error).error
    expect(refused.code).toBe("BILLING_PROFILE_REQUIRED")
    expect(refused.message).toMatch(/billing details/)
    const me = (await browser.get("/api/auth/me")).body as { readonly user: { readonly id: string } }
    expect(await count(`SELECT count(*)::int AS n FROM orders WHERE user_id = '${me.user.id}'`)).toBe(0)
    // Nothing reached Stripe: no customer made, no checkout session opened.
    expect((await run(stripe.control.events)).length).toBe(eventsBefore)
    expect(await count(`SELECT count(*)::int AS n FROM payment_customers WHERE user_id = '${me.user.id}'`)).toBe(0)

    await fillBillingProfile(browser)
    const order = await orderGame(browser)
    expect((await payCheckout(order.checkoutUrl!, TEST_CARD)).status).toBe(303)
    await waitFor("the order to be paid", async () => (await statusOf(browser, order.id)) !== "awaiting_payment" ? true : undefined)
    // The plan's price excluding VAT, 20 % on top for a French consumer: exactly what Stripe took, and the invoice.
    const plan = ((await browser.get("/api/plans")).body as { readonly plans: ReadonlyArray<{ readonly id: string; readonly priceCents: number }> })
      .plans.find((p) => p.id === "mc-2g")!
    const rows = await server.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly reference: string; readonly amount: number; readonly ht: number; readonly vat: number; readonly ttc: number }>`
        SELECT l.reference, l.amount_cents AS amount, i.total_excluding_vat_cents AS ht, i.vat_cents AS vat,
          i.total_including_vat_cents AS ttc
        FROM ledger_entries l JOIN invoices i ON i.ledger_kind = 'charge' AND i.ledger_reference = l.reference
        WHERE l.order_id = ${order.id}`))
    const ttc = plan.priceCents * 1.2
    expect(rows.map(({ reference: _, ...amounts }) => amounts)).toEqual([{ amount: ttc, ht: plan.priceCents, vat: ttc - plan.priceCents, ttc }])
    const charged = (await server.runtime.runPromise(stripePayments)).find((p) => p.id === rows[0]!.reference)
    expect(charged?.amount).toBe(ttc)
  }, 60_000)

  it("the browser coming back to the panel changes nothing; Stripe's webhook does", async () => {
    const browser = await customer("return")
    const order = await orderGame(browser)
    // Stripe's deliveries held back: the customer pays and their browser comes back first.
    await run(stripe.control.delayNextEvents(1000, 1_500))
    const paid = await payCheckout(order.checkoutUrl!, TEST_CARD)
    expect(paid.status).toBe(303)
    expect(paid.location).toBe(`http://panel.test/orders/${order.id}`)
    expect(await statusOf(browser, order.id)).toBe("awaiting_payment")
    expect(await count(`SELECT count(*)::int AS n FROM ledger_entries WHERE order_id = '${order.id}'`)).toBe(0)
    await run(stripe.control.clearFaults)
    await waitFor("the webhook to start the provisioning", async () =>
      (await statusOf(browser, order.id)) !== "awaiting_payment" ? true : undefined)
    await waitFor("the order to complete", async () => (await statusOf(browser, order.id)) === "completed" ? true : undefined)
  }, 60_000)

  it("each webhook delivered five times and out of order: one charge, one subscription per order", async () => {
    const browser = await customer("faults")
    const orders = [await orderGame(browser), await orderGame(browser)]
    const eventsBefore = (await run(stripe.control.events)).length
    await run(stripe.control.duplicateNextEvents(1000, 5))
    // Held until both payments' events happened (each payment makes several), then delivered newest first.
    const perPayment = 5
    await run(stripe.control.reorderNextEvents(2 * perPayment))
    for (const order of orders) expect((await payCheckout(order.checkoutUrl!, TEST_CARD)).status).toBe(303)
    // Every event of both payments planned (five copies each) before the faults are disarmed and the held ones sent.
    await run(stripe.control.awaitDeliveries)
    await run(stripe.control.clearFaults)
    await run(stripe.control.awaitDeliveries)
    const ours = (await run(stripe.control.deliveries)).filter((d) => d.outcome === 200)
    const newEvents = (await run(stripe.control.events)).slice(eventsBefore)
    expect(newEvents.length).toBeGreaterThanOrEqual(2 * perPayment)
    for (const order of orders) {
      await waitFor(`order ${order.id} to complete`, async () => (await statusOf(browser, order.id)) === "completed" ? true : undefined)
      expect(await count(`SELECT count(*)::int AS n FROM ledger_entries WHERE order_id = '${order.id}'`)).toBe(1)
      expect(await count(`SELECT count(*)::int AS n FROM subscriptions WHERE order_id = '${order.id}'`)).toBe(1)
    }
    const completed = newEvents.filter((e) => e.type === "checkout.session.completed").map((e) => e.id)
    expect(completed).toHaveLength(2)
    for (const id of completed) expect(ours.filter((d) => d.eventId === id).length).toBe(5)
  }, 60_000)
})

describe("100 orders at the same time", () => {
  it("are all paid and their provisioning started, and no PaymentIntent is charged twice", async () => {
    const browsers = await Promise.all(Array.from({ length: 10 }, (_, i) => customer(`burst${i}`)))
    const paymentsBefore = (await server.runtime.runPromise(stripePayments)).length
    const started = Date.now()
    const placed = await Promise.all(Array.from({ length: 100 }, async (_, n) => {
      const browser = browsers[n % 10]!
      const order = expectBody(await browser.post("/api/orders", vpsOrder(`burst-${n}`)), 201, Envelopes.order).order
      const answer = await payCheckout(order.checkoutUrl!, TEST_CARD)
      expect(answer.status).toBe(303)
      return { browser, order }
    }))
    // Paid: Stripe's webhook moved each order to provisioning (its workflow started) with its subscription and charge.
    const statuses = await Promise.all(placed.map(({ browser, order }) =>
      waitFor(`order ${order.id} to be paid`, async () => {
        const status = await statusOf(browser, order.id)
        return status === "awaiting_payment" ? undefined : status
      }, 120_000)))
    const seconds = (Date.now() - started) / 1000
    expect(statuses.filter((s) => s === "expired")).toEqual([])
    const payments = (await server.runtime.runPromise(stripePayments)).slice(paymentsBefore)
    expect(payments).toHaveLength(100)
    expect(new Set(payments.map((p) => p.id)).size).toBe(100)
    const ids = placed.map(({ order }) => `'${order.id}'`).join(",")
    expect(await count(`SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'charge' AND order_id IN (${ids})`)).toBe(100)
    expect(await count(`SELECT count(DISTINCT reference)::int AS n FROM ledger_entries WHERE kind = 'charge' AND order_id IN (${ids})`)).toBe(100)
    expect(await count(`SELECT count(*)::int AS n FROM subscriptions WHERE order_id IN (${ids})`)).toBe(100)
    console.info(`100 concurrent orders through the sandbox Stripe: 100 paid (webhooks applied) in ${seconds.toFixed(1)} s`)
  }, 240_000)
})
