// A refusal the sandbox answers in Stripe's error envelope `{ error: { type, code, decline_code, message, param, … } }`
// with Stripe's HTTP status (the SDK picks its error class from the status: 400/404 invalid request or idempotency,
// 401 authentication, 402 card, 5xx API).
import { Data } from "effect"

export type ErrorType = "invalid_request_error" | "card_error" | "idempotency_error" | "api_error"

export class StripeFailure extends Data.TaggedError("StripeFailure")<{
  readonly status: number
  readonly type: ErrorType
  readonly message: string
  readonly code?: string
  readonly declineCode?: string
  readonly param?: string
  /** The payment intent (or setup intent) the failed attempt left, as Stripe attaches it to card errors. */
  readonly paymentIntent?: object
  readonly setupIntent?: object
  /** Parameter validation happens before the endpoint runs: Stripe keeps no idempotent result for it. */
  readonly beforeExecution?: boolean
}> {
  get body(): { readonly error: Record<string, unknown> } {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code === undefined ? {} : { code: this.code, doc_url: `https://stripe.com/docs/error-codes/${this.code.replaceAll("_", "-")}` }),
        ...(this.declineCode === undefined ? {} : { decline_code: this.declineCode }),
        ...(this.param === undefined ? {} : { param: this.param }),
        ...(this.paymentIntent === undefined ? {} : { payment_intent: this.paymentIntent }),
        ...(this.setupIntent === undefined ? {} : { setup_intent: this.setupIntent })
      }
    }
  }
}

const nouns: Record<string, string> = {
  cus: "customer",
  cs: "checkout.session",
  pi: "payment_intent",
  pm: "payment_method",
  seti: "setup_intent",
  ch: "charge",
  re: "refund",
  dp: "dispute",
  evt: "event",
  we: "webhook_endpoint"
}

/** 404 `resource_missing`, worded as Stripe words it (`No such customer: 'cus_x'`). */
export const noSuch = (prefix: keyof typeof nouns, id: string, param = "id") =>
  new StripeFailure({ status: 404, type: "invalid_request_error", code: "resource_missing", param, message: `No such ${nouns[prefix]}: '${id}'` })

export const invalid = (message: string, options: { readonly param?: string; readonly code?: string } = {}) =>
  new StripeFailure({ status: 400, type: "invalid_request_error", message, ...options })

export const unknownPath = (method: string, path: string) =>
  new StripeFailure({
    status: 404,
    type: "invalid_request_error",
    message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`
  })
