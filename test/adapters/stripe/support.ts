// What the sandbox Stripe's tests share: the official SDK pointed at the sandbox, plain-HTTP use of its checkout page
// (as scripts use it, API.md § Payments), and a small loopback webhook receiver whose answers the test chooses.
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

const send = (url: string, init: RequestInit) =>
  Effect.promise(async (): Promise<PageAnswer> => {
    const response = await fetch(url, { ...init, redirect: "manual" })
    return { status: response.status, location: response.headers.get("location"), body: await response.text() }
  })

export const getPage = (url: string) => send(url, { method: "GET" })

export const postPage = (url: string, fields: Record<string, string>) =>
  send(url, { method: "POST", body: new URLSearchParams(fields), headers: { "content-type": "application/x-www-form-urlencoded" } })

/** Pays (or saves) `card` on the hosted page at `url` as a script does; answers the page's reply. */
export const payWith = (url: string, card: string) => postPage(url, { card, exp: "12/34", cvc: "123" })

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
