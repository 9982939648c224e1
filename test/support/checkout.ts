// Paying an order over HTTP as its customer does (API.md § Payments): the card posted on the order's hosted checkout
// page (the sandbox Stripe's form), then waiting until the sandbox Stripe's signed webhook reached the server and the
// order left `awaiting_payment`. The browser's return to the panel does nothing by itself.
import type { Browser } from "./browser.ts"

export const TEST_CARD = "4242424242424242"

export interface CheckoutAnswer {
  readonly status: number
  readonly location: string | null
  readonly body: string
}

/** Posts the checkout page's form (or its challenge page's `outcome`) as a script does. */
export const postCheckout = async (checkoutUrl: string, fields: Record<string, string>): Promise<CheckoutAnswer> => {
  const response = await fetch(checkoutUrl, {
    method: "POST",
    redirect: "manual",
    body: new URLSearchParams(fields),
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })
  return { status: response.status, location: response.headers.get("location"), body: await response.text() }
}

/** Pays with `card` on the page; the page's answer (303 back to the panel's order page when paid). */
export const payCheckout = (checkoutUrl: string, card: string = TEST_CARD) => postCheckout(checkoutUrl, { card, exp: "12/34", cvc: "123" })

interface OrderBody {
  readonly id: string
  readonly status: string
  readonly checkoutUrl?: string
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Pays the order `order` (as `POST /api/orders` answered it) with the success card and waits (bounded) until the
 * webhook moved it out of `awaiting_payment`; answers the order as it then reads.
 */
export const payOrder = async (browser: Browser, order: OrderBody, timeoutMs = 20_000): Promise<OrderBody> => {
  await paid(order)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reply = await browser.get(`/api/orders/${order.id}`)
    const now = reply.body as OrderBody
    if (reply.status === 200 && now.status !== "awaiting_payment") return now
    if (Date.now() > deadline) throw new Error(`order ${order.id} still awaits its payment after ${timeoutMs} ms: ${reply.text}`)
    await pause(20)
  }
}

/**
 * Pays the order just placed with `card` (the success card by default; a card asking for authentication is approved
 * on the challenge page) until the page answers 303; the webhook then arrives on its own.
 */
export const paid = async (order: OrderBody, card: string = TEST_CARD) => {
  if (order.checkoutUrl === undefined) throw new Error(`order ${order.id} has no checkoutUrl: ${JSON.stringify(order)}`)
  let answer = await payCheckout(order.checkoutUrl, card)
  if (answer.status === 200 && answer.body.includes("outcome")) answer = await postCheckout(order.checkoutUrl, { outcome: "approve" })
  if (answer.status !== 303) throw new Error(`the checkout page answered ${answer.status}: ${answer.body.slice(0, 300)}`)
}

/**
 * Saves `card` as the customer's card through the provider's card page (POST /api/payment-method/update, then the
 * hosted form): renewals charge it from then on. `4000000000009995` (insufficient funds) saves, then every charge of it
 * is declined; `4242424242424242` goes through again.
 */
export const saveCard = async (browser: Browser, card: string) => {
  const page = await browser.post("/api/payment-method/update")
  if (page.status !== 200) throw new Error(`the card page answered ${page.status}: ${page.text}`)
  const answer = await payCheckout((page.body as { url: string }).url, card)
  if (answer.status !== 303) throw new Error(`saving the card answered ${answer.status}: ${answer.body.slice(0, 300)}`)
}

export const DECLINED_OFF_SESSION_CARD = "4000000000009995"

/** A French consumer's billing details (20 % VAT), as the panel's billing-profile form sends them. */
export const FRENCH_BILLING_PROFILE = {
  name: "Ada Lovelace",
  address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" }
}

/**
 * Saves the signed-in customer's billing profile (PUT /api/billing-profile): without one, POST /api/orders answers 422
 * BILLING_PROFILE_REQUIRED. `origin` for a server that is given one (a process started with its public URL).
 */
export const fillBillingProfile = async (
  browser: Browser,
  origin?: string,
  profile: unknown = FRENCH_BILLING_PROFILE
) => {
  const saved = await browser.request("PUT", "/api/billing-profile", { json: profile, ...(origin === undefined ? {} : { headers: { origin } }) })
  if (saved.status !== 200) throw new Error(`saving the billing profile answered ${saved.status}: ${saved.text}`)
}
