// The billing page's API over HTTP on the real application (sandbox gateway): each subscription's renewal in a state
// the panel puts in words (GET /api/subscriptions/renewals), and paying a lapsed subscription from the panel
// (POST /api/subscriptions/:id/pay): the saved card when it goes through, else a page to pay on.
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PaymentAnswerView, RenewalView } from "../../adapters/http/views.ts"
import { sweepRenewals } from "../../domain/billing/autoRenewal.ts"
import { startTestServer, stripePayments } from "../support/testServer.ts"
import { DECLINED_OFF_SESSION_CARD, saveCard, TEST_CARD } from "../support/checkout.ts"
import {
  errorCode,
  expectBody,
  lapse,
  type LeakScanner,
  leakScanner,
  provisionedVps,
  signedInCustomer,
  type TestServer,
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

const Renewals = Schema.Struct({ renewals: Schema.Array(RenewalView) })
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000)
const charges = () => server.runtime.runPromise(stripePayments)

const renewalOf = async (browser: Awaited<ReturnType<typeof signedInCustomer>>, subscriptionId: string) => {
  const reply = await browser.get("/api/subscriptions/renewals")
  expect(reply.headers.get("cache-control")).toBe("no-store")
  return expectBody(reply, 200, Renewals).renewals.find((r) => r.subscriptionId === subscriptionId)
}

describe("the renewal of each subscription", () => {
  it("a running VPS renews on its period's end for its plan's price; cancelled, it ends then", async () => {
    const browser = await signedInCustomer(server, scan)
    const { subscriptionId } = await provisionedVps(browser, "renews-1")
    const subscriptions = (await browser.get("/api/subscriptions")).body as { subscriptions: Array<{ id: string; currentPeriodEnd: string }> }
    const periodEnd = subscriptions.subscriptions.find((s) => s.id === subscriptionId)?.currentPeriodEnd
    expect(await renewalOf(browser, subscriptionId)).toMatchObject({
      state: "renews",
      planName: "VPS S",
      // The plan's 5.00 € excluding VAT, 20 % included for a French consumer.
      amountCents: 600,
      nextChargeAt: periodEnd,
      attempts: 0,
      payUrl: null
    })
    expect((await browser.post(`/api/subscriptions/${subscriptionId}/cancel`)).status).toBe(200)
    expect(await renewalOf(browser, subscriptionId)).toMatchObject({ state: "cancelled", endsAt: periodEnd, nextChargeAt: null })
  })

  it("a lapsed VPS whose card is declined shows the failure and the next try; paying from the panel gives a page", async () => {
    const browser = await signedInCustomer(server, scan)
    const { subscriptionId, vpsId } = await provisionedVps(browser, "declined-1")
    // The card now saved is declined at every charge.
    await saveCard(browser, DECLINED_OFF_SESSION_CARD)
    try {
      const periodEnd = minutesAgo(5)
      await lapse(server, subscriptionId, periodEnd)
      await server.runtime.runPromise(sweepRenewals)
      await waitForVpsStatus(browser, vpsId, "suspended")
      expect(await renewalOf(browser, subscriptionId)).toMatchObject({
        state: "payment_failed",
        attempts: 1,
        nextAttemptAt: new Date(periodEnd.getTime() + 86_400_000).toISOString(),
        endsAt: new Date(periodEnd.getTime() + 7 * 86_400_000).toISOString()
      })
      const answer = expectBody(await browser.post(`/api/subscriptions/${subscriptionId}/pay`), 200, PaymentAnswerView)
      // Declined again: Stripe's hosted page to pay on (the sandbox Stripe's).
      expect(answer.outcome).toBe("pay_on_page")
      expect((answer as { url: string }).url).toContain("/c/pay/cs_test_")
      expect(await vpsStatus(browser, vpsId)).toBe("suspended")
    } finally {
      await saveCard(browser, TEST_CARD)
    }
  })

  it("paying a lapsed VPS with a card that goes through charges once, brings it back running, and a second click charges nothing", async () => {
    const browser = await signedInCustomer(server, scan)
    const { subscriptionId, vpsId } = await provisionedVps(browser, "lapsed-1")
    await lapse(server, subscriptionId, minutesAgo(5))
    await waitForVpsStatus(browser, vpsId, "suspended")
    const before = (await charges()).length
    const replies = await Promise.all([1, 2].map(() => browser.post(`/api/subscriptions/${subscriptionId}/pay`)))
    for (const reply of replies) {
      expect(reply.headers.get("cache-control")).toBe("no-store")
      expect(expectBody(reply, 200, PaymentAnswerView)).toMatchObject({ outcome: "paid", subscription: { status: "active" } })
    }
    expect((await charges()).length - before).toBe(1)
    await waitFor("the VPS running again", async () => ((await vpsStatus(browser, vpsId)) === "running" ? true : undefined))
    expect(await renewalOf(browser, subscriptionId)).toMatchObject({ state: "renews", attempts: 0 })
    // The automatic renewal sees the period paid: nothing more is charged.
    await server.runtime.runPromise(sweepRenewals)
    expect((await charges()).length - before).toBe(1)
  })

  it("another customer's subscription cannot be paid or read: 404", async () => {
    const owner = await signedInCustomer(server, scan)
    const { subscriptionId } = await provisionedVps(owner, "owned-1")
    const stranger = await signedInCustomer(server, scan)
    expect(errorCode(await stranger.post(`/api/subscriptions/${subscriptionId}/pay`), 404)).toBe("SUBSCRIPTION_NOT_FOUND")
    expect(expectBody(await stranger.get("/api/subscriptions/renewals"), 200, Renewals).renewals).toEqual([])
    expect(errorCode(await stranger.post("/api/subscriptions/not-a-uuid/pay"), 404)).toBeDefined()
  })
})
