// POST /api/payments/stripe/webhook on a real server outside sandbox mode, fed by the sandbox Stripe over loopback:
// Stripe's deliveries verified and recorded once each (redeliveries change nothing), refunds confirmed, a verified
// event of another type ignored with a 200, and forged, stale or altered bodies refused with 400 and nothing written;
// the customer's saved card and the page to change it (GET /api/payment-method, POST /api/payment-method/update).
import { randomBytes } from "node:crypto"
import { Effect, Exit, Option, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import Stripe from "stripe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sandboxStripe, type SandboxStripe } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import { PREVIOUS_WEBHOOK_SECRET, SECRET_KEY, WEBHOOK_SECRET } from "../../app/StripeCredentials.ts"
import { storeSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { PaymentNotifications } from "../../ports/PaymentNotifications.ts"
import { send } from "../support/fuzz.ts"
import { startTestServer } from "../support/testServer.ts"
import { payWith, postPage } from "../adapters/stripe/support.ts"
import { Browser } from "../support/browser.ts"

const PATH = "/api/payments/stripe/webhook"
const PREVIOUS = "whsec_the_endpoint_secret_before_rotation"

let server: Awaited<ReturnType<typeof startTestServer>>
let sandbox: SandboxStripe
let sandboxScope: Scope.Closeable
let secret: string
let stripe: Stripe

const recorded = () =>
  server.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM payment_notifications`)).then((rows) => rows[0]!.n)

const post = (body: string, signature: string | undefined, headers: Record<string, string> = {}) =>
  send(server.url, {
    method: "POST",
    path: PATH,
    headers: { "content-type": "application/json", ...(signature === undefined ? {} : { "stripe-signature": signature }), ...headers },
    body
  })

const now = () => Math.floor(Date.now() / 1000)
const sign = (payload: string, s = secret, timestamp = now()) => Stripe.webhooks.generateTestHeaderString({ payload, secret: s, timestamp })
const event = (id: string, type = "customer.created") =>
  JSON.stringify({ id, object: "event", type, created: now(), data: { object: { id: "cus_x", object: "customer" } } })

beforeAll(async () => {
  sandboxScope = await Effect.runPromise(Scope.make())
  sandbox = await Effect.runPromise(Effect.provideService(sandboxStripe({ webhooks: { initialRetryDelayMs: 50 } }), Scope.Scope, sandboxScope))
  server = await startTestServer({
    sandbox: false,
    smtpUrl: Option.some(Redacted.make("smtp://127.0.0.1:9")),
    stripeApiUrl: Option.some(new URL(sandbox.baseUrl)),
    stripeRetries: 0,
    registryProvider: "recherche-entreprises",
    vatRegistryProvider: "vies"
  })
  secret = (await Effect.runPromise(sandbox.control.registerWebhook(`${server.url}${PATH}`))).secret
  await server.runtime.runPromise(Effect.all([
    storeSecret(SECRET_KEY, Redacted.make(sandbox.secretKey)),
    storeSecret(WEBHOOK_SECRET, Redacted.make(secret)),
    storeSecret(PREVIOUS_WEBHOOK_SECRET, Redacted.make(PREVIOUS))
  ]))
  stripe = new Stripe(sandbox.secretKey, { host: sandbox.host, port: sandbox.port, protocol: "http", maxNetworkRetries: 0 })
}, 120_000)

afterAll(async () => {
  await server?.stop()
  if (sandboxScope !== undefined) await Effect.runPromise(Scope.close(sandboxScope, Exit.void))
})

describe("POST /api/payments/stripe/webhook", () => {
  it("Stripe's deliveries of a paid checkout and a refund are verified and recorded once each, even delivered twice", async () => {
    await Effect.runPromise(sandbox.control.duplicateNextEvents(1000))
    const customer = await stripe.customers.create({ metadata: { userId: "u" } })
    const session = await stripe.checkout.sessions.create({
      mode: "payment",
      customer: customer.id,
      client_reference_id: "7d5a1f6e-0000-4000-8000-000000000001",
      line_items: [{ quantity: 1, price_data: { currency: "eur", unit_amount: 600, product_data: { name: "VPS S" } } }],
      payment_intent_data: { setup_future_usage: "off_session" },
      success_url: "http://panel.test/ok",
      cancel_url: "http://panel.test/cancel"
    })
    expect((await Effect.runPromise(payWith(session.url!, "4242424242424242"))).status).toBe(303)
    const paid = await stripe.checkout.sessions.retrieve(session.id)
    await stripe.refunds.create({ payment_intent: paid.payment_intent as string, amount: 250 }, { idempotencyKey: "refund:once" })
    await Effect.runPromise(sandbox.control.awaitDeliveries)
    await Effect.runPromise(sandbox.control.clearFaults)
    const ours = await Effect.runPromise(sandbox.control.deliveries)
    expect(ours.length).toBeGreaterThan(4)
    expect(ours.every((d) => d.outcome === 200), JSON.stringify(ours.map((d) => d.outcome))).toBe(true)
    const events = new Set(ours.map((d) => d.eventId))
    expect(ours.length, "each event delivered twice").toBe(2 * events.size)
    expect(await recorded(), "each recorded once").toBe(events.size)
    expect(await server.runtime.runPromise(Effect.flatMap(PaymentNotifications, (n) => n.confirmedRefundCents(paid.payment_intent as string)))).toBe(250)
  }, 60_000)

  it("a redelivered event is answered 200 as a duplicate and changes nothing", async () => {
    const body = event("evt_redelivered_1")
    const first = await post(body, sign(body))
    expect(first.status).toBe(200)
    expect(JSON.parse(first.text)).toEqual({ received: true, ignored: true, duplicate: false })
    const before = await recorded()
    const again = await post(body, sign(body))
    expect(JSON.parse(again.text)).toEqual({ received: true, ignored: true, duplicate: true })
    expect(await recorded()).toBe(before)
  })

  it("the previous secret is still accepted during a rotation; no Origin header is needed", async () => {
    const body = event("evt_previous_secret")
    const reply = await post(body, sign(body, PREVIOUS))
    expect(reply.status).toBe(200)
    const foreign = await post(event("evt_foreign_origin"), sign(event("evt_foreign_origin")), { origin: "https://stripe.example" })
    expect(foreign.status).toBe(200)
  })

  it("a bad signature, a stale timestamp, a body altered by one byte or no signature: 400, nothing recorded", async () => {
    const before = await recorded()
    const body = event("evt_refused")
    const altered = body.replace("evt_refused", "evt_refusee")
    for (const [payload, signature] of [
      [body, sign(body, "whsec_not_ours")],
      [body, sign(body, secret, now() - 301)],
      [altered, sign(body)],
      [body, undefined],
      [body, "t=1,v1=00"]
    ] as const) {
      const reply = await post(payload, signature)
      expect(reply.status).toBe(400)
      expect(JSON.parse(reply.text).error.code).toBe("WEBHOOK_SIGNATURE_INVALID")
      expect(reply.text).not.toContain("evt_refused")
    }
    expect(await recorded()).toBe(before)
  })

  it("is listed in /openapi.json", async () => {
    const doc = await send(server.url, { method: "GET", path: "/openapi.json", headers: {} })
    expect(Object.keys(JSON.parse(doc.text).paths)).toContain(PATH)
  })
})

describe("the saved card", () => {
  const customerBrowser = async () => {
    const browser = new Browser(server.url)
    const email = `card.${Date.now()}.${randomBytes(6).toString("hex")}@example.com`
    const registered = await browser.post("/api/auth/register", {
      email,
      password: "correct horse battery",
      accountType: "personal",
      firstName: "Ada",
      lastName: "Lovelace"
    })
    expect(registered.status, registered.text).toBe(201)
    expect((await browser.post("/api/auth/login", { email, password: "correct horse battery" })).status).toBe(200)
    return { browser, email }
  }

  it("none before a card is saved; the card page saves one and brings the customer back; then brand, last 4 and expiry", async () => {
    const { browser, email } = await customerBrowser()
    const none = await browser.get("/api/payment-method")
    expect(none.status).toBe(404)
    expect(JSON.parse(none.text).error.code).toBe("PAYMENT_METHOD_NOT_FOUND")
    const page = await browser.post("/api/payment-method/update")
    expect(page.status, page.text).toBe(200)
    const { url } = JSON.parse(page.text) as { readonly url: string }
    expect(url.startsWith(sandbox.baseUrl)).toBe(true)
    // This card asks the holder to authenticate on the page (then it serves renewals without asking).
    expect((await Effect.runPromise(payWith(url, "4000003800000446"))).status).toBe(200)
    const back = await Effect.runPromise(postPage(url, { outcome: "approve" }))
    expect(back.status).toBe(303)
    expect(back.location).toBe("http://panel.test/preferences")
    const saved = await browser.get("/api/payment-method")
    expect(JSON.parse(saved.text)).toEqual({ brand: "visa", last4: "0446", expMonth: 12, expYear: 2034 })
    // A second change of card is for the same customer at Stripe.
    expect((await browser.post("/api/payment-method/update")).status).toBe(200)
    expect((await stripe.customers.list({ email })).data.length).toBe(1)
  })

  it("signed out: 401", async () => {
    expect((await new Browser(server.url).get("/api/payment-method")).status).toBe(401)
  })
})
