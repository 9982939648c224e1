// Paying an order as its customer does (API.md § Payments): the test card posted on the order's hosted checkout page
// (the sandbox Stripe's form), which answers 303 back to the panel; the server is told by Stripe's webhook.
export const payCheckout = async (checkoutUrl: string | undefined): Promise<void> => {
  if (checkoutUrl === undefined) throw new Error("the order has no checkout page")
  const response = await fetch(checkoutUrl, {
    method: "POST",
    redirect: "manual",
    body: new URLSearchParams({ card: "4242424242424242", exp: "12/34", cvc: "123" }),
    headers: { "content-type": "application/x-www-form-urlencoded" },
    signal: AbortSignal.timeout(30_000)
  })
  const text = await response.text()
  if (response.status !== 303) throw new Error(`the checkout page answered ${response.status}: ${text.slice(0, 300)}`)
}
