// The sandbox's hosted pages, as plain HTML forms (API.md § Payments, "Sandbox checkout page"): the checkout form
// (`card`, `exp` MM/YY, `cvc`, posted to the page's own URL), the challenge page of a card that needs authentication
// (`outcome=approve|fail`, posted to the same URL), and the authentication page of a payment intent confirmed
// on-session through the API (`next_action.redirect_to_url`).
import type { CheckoutSession } from "./objects.ts"

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

const layout = (title: string, body: string) =>
  `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1f36}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#b00020}.note{color:#697386;font-size:.85rem}</style>
</head>
<body><p class="note">Sandbox Stripe — test mode: no real card is charged.</p>
${body}
</body>
</html>
`

const amount = (session: CheckoutSession) =>
  session.amount_total === null || session.currency === null ? "" : `${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}`

export const checkoutForm = (session: CheckoutSession, action: string, message: string | undefined) =>
  layout(
    session.mode === "payment" ? "Pay" : "Save a card",
    `<h1>${session.mode === "payment" ? `Pay ${escape(amount(session))}` : "Save a card for later payments"}</h1>
${message === undefined ? "" : `<p class="error" role="alert">${escape(message)}</p>`}
<form method="post" action="${escape(action)}">
<label for="card">Card number</label><input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required>
<label for="exp">Expiry (MM/YY)</label><input id="exp" name="exp" placeholder="MM/YY" autocomplete="cc-exp" required>
<label for="cvc">CVC</label><input id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required>
<button type="submit">${session.mode === "payment" ? "Pay" : "Save card"}</button>
</form>
${session.cancel_url === null ? "" : `<p><a href="${escape(session.cancel_url)}">Cancel and go back</a></p>`}`
  )

export const challengePage = (action: string, what: string) =>
  layout(
    "Authenticate",
    `<h1>Authenticate this ${escape(what)}</h1>
<p>Your bank asks you to confirm it is you (3-D Secure test page).</p>
<form method="post" action="${escape(action)}"><input type="hidden" name="outcome" value="approve"><button type="submit">Complete authentication</button></form>
<form method="post" action="${escape(action)}"><input type="hidden" name="outcome" value="fail"><button type="submit">Fail authentication</button></form>`
  )

export const closedPage = (session: CheckoutSession) =>
  layout(
    "Checkout",
    session.status === "complete"
      ? `<h1>${session.mode === "payment" ? "Payment complete" : "Card saved"}</h1>`
      : `<h1>This checkout session has expired</h1>${session.cancel_url === null ? "" : `<p><a href="${escape(session.cancel_url)}">Go back</a></p>`}`
  )

export const messagePage = (title: string, message: string) => layout(title, `<h1>${escape(title)}</h1><p>${escape(message)}</p>`)
