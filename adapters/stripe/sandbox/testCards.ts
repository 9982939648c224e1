// The test cards of reference/stripe.md § Test cards and what each does, on-session (the checkout page) and off-session
// (a saved card charged with `off_session: true`).
export type CardBehaviour =
  | { readonly kind: "succeeds" }
  | { readonly kind: "declined"; readonly declineCode: "generic_decline" | "insufficient_funds" }
  /** Asks for authentication on-session; off-session it succeeds only once set up for off-session use. */
  | { readonly kind: "authenticate-unless-set-up" }
  /** Asks for authentication every time; off-session it fails with `authentication_required`. */
  | { readonly kind: "always-authenticate" }
  /** Asks for authentication on-session; off-session it succeeds as if already set up. */
  | { readonly kind: "already-set-up" }

export const testCards: Readonly<Record<string, CardBehaviour>> = {
  "4242424242424242": { kind: "succeeds" },
  "4000000000009995": { kind: "declined", declineCode: "insufficient_funds" },
  "4000000000000002": { kind: "declined", declineCode: "generic_decline" },
  "4000002500003155": { kind: "authenticate-unless-set-up" },
  "4000002760003184": { kind: "always-authenticate" },
  "4000003800000446": { kind: "already-set-up" }
}

/** What an attempt with this card does: pass, decline with a code, or ask the cardholder to authenticate. */
export type Outcome =
  | { readonly kind: "pass" }
  | { readonly kind: "decline"; readonly declineCode: string }
  | { readonly kind: "challenge" }

export const attempt = (
  behaviour: CardBehaviour | undefined,
  context: { readonly offSession: boolean; readonly setUpForOffSession: boolean; readonly settingUp: boolean }
): Outcome => {
  // A number that is not a test card is a live card: test mode refuses it.
  if (behaviour === undefined) return { kind: "decline", declineCode: "test_mode_live_card" }
  switch (behaviour.kind) {
    case "succeeds":
      return { kind: "pass" }
    case "declined":
      // Saving a card charges nothing: only the generic decline refuses a setup (the issuer refuses the card itself).
      return context.settingUp && behaviour.declineCode === "insufficient_funds" ? { kind: "pass" } : { kind: "decline", declineCode: behaviour.declineCode }
    case "authenticate-unless-set-up":
      if (!context.offSession) return { kind: "challenge" }
      return context.setUpForOffSession ? { kind: "pass" } : { kind: "decline", declineCode: "authentication_required" }
    case "always-authenticate":
      return context.offSession ? { kind: "decline", declineCode: "authentication_required" } : { kind: "challenge" }
    case "already-set-up":
      return context.offSession ? { kind: "pass" } : { kind: "challenge" }
  }
}

export const declineMessages: Record<string, string> = {
  generic_decline: "Your card was declined.",
  insufficient_funds: "Your card has insufficient funds.",
  authentication_required: "Your card was declined. This transaction requires authentication.",
  payment_intent_authentication_failure:
    "We are unable to authenticate your payment method. Please choose a different payment method and try again.",
  setup_intent_authentication_failure:
    "We are unable to authenticate your payment method. Please choose a different payment method and try again.",
  test_mode_live_card: "Your card was declined. Your request was in test mode, but used a non test (live) card."
}

const luhn = (digits: string): boolean => {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return sum % 10 === 0
}

export interface CardDetails {
  readonly number: string
  readonly expMonth: number
  readonly expYear: number
  readonly behaviour: CardBehaviour | undefined
}

/** Reads the page's fields (`card`, `exp` MM/YY, `cvc`); a message for the cardholder when they are not usable. */
export const readCard = (
  fields: { readonly card: string; readonly exp: string; readonly cvc: string },
  now: Date
): CardDetails | { readonly error: string; readonly code: string } => {
  const number = fields.card.replace(/[\s-]/g, "")
  if (!/^\d{13,19}$/.test(number) || !luhn(number)) return { error: "Your card number is incorrect.", code: "incorrect_number" }
  const exp = /^\s*(\d{1,2})\s*\/\s*(\d{2})\s*$/.exec(fields.exp)
  const month = Number(exp?.[1])
  if (exp === null || month < 1 || month > 12) return { error: "Your card's expiration date is incomplete.", code: "invalid_expiry_month" }
  const year = 2000 + Number(exp[2])
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) {
    return { error: "Your card's expiration year is in the past.", code: "invalid_expiry_year" }
  }
  if (!/^\d{3,4}$/.test(fields.cvc.trim())) return { error: "Your card's security code is incomplete.", code: "incomplete_cvc" }
  return { number, expMonth: month, expYear: year, behaviour: testCards[number] }
}

export const brandOf = (number: string): string =>
  number.startsWith("4") ? "visa" : /^5[1-5]/.test(number) ? "mastercard" : /^3[47]/.test(number) ? "amex" : "unknown"
