// What the sandbox Stripe's tests share: the official SDK pointed at the sandbox, plain-HTTP use of its checkout page
// (as scripts use it, API.md § Payments), and a small loopback webhook receiver whose answers the test chooses.
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import Stripe from "stripe"
import type { SandboxStripe } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"

export const sdk = (sandbox: SandboxStripe, options: { readonly maxNetworkRetries?: number; readonly timeout?: number } = {}) =>
  new Stripe(sandbox.secretKey, {
    host: sandbox.host,
    port: sandbox.port,
    protocol: "http",
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout })
  })

/** An SDK call as an Effect; its rejection (a `Stripe.errors.StripeError`) in the error channel. */
export const call = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => e as Stripe.errors.StripeError })

export interface PageAnswer {
  readonly status: number
  readonly location: string | null
  readonly body: string
}

/** How pages are reached: the global fetch over loopback, or a simulation's own fetch without sockets. */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>

const send = (url: string, init: RequestInit, via: Fetch = fetch) =>
  Effect.promise(async (): Promise<PageAnswer> => {
    const response = await via(url, { ...init, redirect: "manual" })
    return { status: response.status, location: response.headers.get("location"), body: await response.text() }
  })

export const getPage = (url: string) => send(url, { method: "GET" })

export const postPage = (url: string, fields: Record<string, string>, via?: Fetch) =>
  send(url, { method: "POST", body: new URLSearchParams(fields), headers: { "content-type": "application/x-www-form-urlencoded" } }, via)

/** Pays (or saves) `card` on the hosted page at `url` as a script does; answers the page's reply. */
export const payWith = (url: string, card: string, via?: Fetch) => postPage(url, { card, exp: "12/34", cvc: "123" }, via)

export interface Received {
  readonly body: string
  readonly headers: IncomingHttpHeaders
}

/** A loopback endpoint recording every delivery; `answers` gives the status of each next delivery (then 200). */
export const receiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const received: Array<Received> = []
    const answers: Array<number | "hang"> = []
    const server: Server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers })
        const answer = answers.shift() ?? 200
        if (answer === "hang") return
        res.writeHead(answer, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    return { url: `http://127.0.0.1:${port}/webhook`, received, answers, server }
  }),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

/** The events a receiver got, verified with the SDK's `constructEvent` (the path the platform's route takes). */
export const verified = (received: ReadonlyArray<Received>, secret: string): Array<Stripe.Event> =>
  received.map((r) => Stripe.webhooks.constructEvent(r.body, r.headers["stripe-signature"] ?? "", secret))

export const lineItem = (name: string, cents: number) => ({
  quantity: 1,
  price_data: { currency: "eur", unit_amount: cents, product_data: { name } }
})

/** A customer and an open payment-mode session for them (the card saved for `usage` once paid). */
export const checkout = (stripe: Stripe, usage: "off_session" | "on_session" | undefined = "off_session") =>
  Effect.gen(function*() {
    const customer = yield* call(() => stripe.customers.create({ metadata: { userId: "u" } }))
    const session = yield* call(() =>
      stripe.checkout.sessions.create({
        mode: "payment",
        customer: customer.id,
        client_reference_id: "order-1",
        line_items: [lineItem("VPS S, first month", 1500)],
        payment_intent_data: { metadata: { orderId: "order-1" }, ...(usage === undefined ? {} : { setup_future_usage: usage }) },
        success_url: "http://panel.test/orders/order-1?session={CHECKOUT_SESSION_ID}",
        cancel_url: "http://panel.test/orders/order-1/cancelled"
      })
    )
    return { customer, session, url: session.url ?? "" }
  })

/** A card saved through a paid checkout (authenticated when it asks), as the first order of a subscription does. */
export const savedCard = (stripe: Stripe, card: string, usage: "off_session" | "on_session" = "off_session", via?: Fetch) =>
  Effect.gen(function*() {
    const { customer, session, url } = yield* checkout(stripe, usage)
    const first = yield* payWith(url, card, via)
    if (first.status === 200) assert.strictEqual((yield* postPage(url, { outcome: "approve" }, via)).status, 303)
    const paid = yield* call(() => stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent"] }))
    const pi = paid.payment_intent as Stripe.PaymentIntent
    return { customer, paymentMethod: pi.payment_method as string }
  })
