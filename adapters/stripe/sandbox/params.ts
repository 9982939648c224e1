// The parameters each endpoint takes, as Schemas over the decoded form (every value a string), and the first problem
// reported as Stripe reports it: `parameter_missing` / `parameter_unknown` / `parameter_invalid_integer` with the
// parameter in bracket notation (`line_items[0][price_data][currency]`). Unknown parameters are refused as Stripe does.
import { Effect, Schema, SchemaGetter, SchemaIssue } from "effect"
import type { FormTree } from "./form.ts"
import { StripeFailure } from "./StripeFailure.ts"

const INVALID_INTEGER = "Invalid integer"
const INVALID_BOOLEAN = "Invalid boolean"

export const FormInt = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^-?\d+$/, { message: INVALID_INTEGER })),
  Schema.decodeTo(Schema.Int, { decode: SchemaGetter.transform(Number), encode: SchemaGetter.transform(String) })
)
export const FormBool = Schema.Literals(["true", "false"]).annotate({ message: INVALID_BOOLEAN }).pipe(
  Schema.decodeTo(Schema.Boolean, {
    decode: SchemaGetter.transform((s: "true" | "false") => s === "true"),
    encode: SchemaGetter.transform((b: boolean) => (b ? "true" : "false"))
  })
)
export const Metadata = Schema.Record(Schema.String, Schema.String)
/** `metadata=` (empty) clears every key on update. */
export const MetadataUpdate = Schema.Union([Schema.Literal(""), Metadata])
const opt = Schema.optionalKey

const common = { expand: opt(Schema.Array(Schema.String)) }

export const CustomerCreate = Schema.Struct({
  ...common,
  email: opt(Schema.String),
  name: opt(Schema.String),
  description: opt(Schema.String),
  phone: opt(Schema.String),
  metadata: opt(Metadata)
})

export const CustomerUpdate = Schema.Struct({
  ...common,
  email: opt(Schema.String),
  name: opt(Schema.String),
  description: opt(Schema.String),
  phone: opt(Schema.String),
  metadata: opt(MetadataUpdate),
  invoice_settings: opt(Schema.Struct({ default_payment_method: opt(Schema.String) }))
})

export const LineItemParam = Schema.Struct({
  quantity: FormInt,
  price_data: Schema.Struct({
    currency: Schema.String,
    unit_amount: FormInt,
    product_data: Schema.Struct({ name: Schema.String, description: opt(Schema.String), metadata: opt(Metadata) })
  })
})

export const CheckoutSessionCreate = Schema.Struct({
  ...common,
  mode: Schema.Literals(["payment", "setup"]),
  customer: opt(Schema.String),
  customer_email: opt(Schema.String),
  client_reference_id: opt(Schema.String),
  success_url: opt(Schema.String),
  cancel_url: opt(Schema.String),
  expires_at: opt(FormInt),
  currency: opt(Schema.String),
  locale: opt(Schema.String),
  metadata: opt(Metadata),
  payment_method_types: opt(Schema.Array(Schema.Literal("card"))),
  line_items: opt(Schema.Array(LineItemParam)),
  payment_intent_data: opt(Schema.Struct({
    setup_future_usage: opt(Schema.Literals(["off_session", "on_session"])),
    description: opt(Schema.String),
    metadata: opt(Metadata)
  })),
  setup_intent_data: opt(Schema.Struct({ description: opt(Schema.String), metadata: opt(Metadata) }))
})

export const PaymentIntentCreate = Schema.Struct({
  ...common,
  amount: FormInt,
  currency: Schema.String,
  customer: opt(Schema.String),
  payment_method: opt(Schema.String),
  confirm: opt(FormBool),
  off_session: opt(Schema.Union([FormBool, Schema.Literals(["one_off", "recurring"])])),
  description: opt(Schema.String),
  metadata: opt(Metadata),
  return_url: opt(Schema.String),
  payment_method_types: opt(Schema.Array(Schema.Literal("card")))
})

export const RefundCreate = Schema.Struct({
  ...common,
  payment_intent: opt(Schema.String),
  charge: opt(Schema.String),
  amount: opt(FormInt),
  reason: opt(Schema.Literals(["duplicate", "fraudulent", "requested_by_customer"])),
  metadata: opt(Metadata)
})

export const WebhookEndpointCreate = Schema.Struct({
  ...common,
  url: Schema.String,
  enabled_events: Schema.Array(Schema.String),
  description: opt(Schema.String),
  api_version: opt(Schema.String),
  metadata: opt(Metadata)
})

export const ListParams = {
  ...common,
  limit: opt(FormInt),
  starting_after: opt(Schema.String),
  ending_before: opt(Schema.String)
}

export const EventList = Schema.Struct({
  ...ListParams,
  type: opt(Schema.String),
  types: opt(Schema.Array(Schema.String)),
  created: opt(Schema.Struct({ gt: opt(FormInt), gte: opt(FormInt), lt: opt(FormInt), lte: opt(FormInt) }))
})
export const SessionList = Schema.Struct({ ...ListParams, customer: opt(Schema.String), payment_intent: opt(Schema.String) })
export const CustomerList = Schema.Struct({ ...ListParams, email: opt(Schema.String) })
export const PaymentMethodList = Schema.Struct({ ...ListParams, customer: opt(Schema.String), type: opt(Schema.Literal("card")) })
export const PlainList = Schema.Struct(ListParams)
/** Search (`/v1/…/search`): the sandbox understands one clause, `metadata['KEY']:'VALUE'`. */
export const Search = Schema.Struct({ ...common, query: Schema.String, limit: opt(FormInt), page: opt(Schema.String) })
export const Retrieve = Schema.Struct(common)

const bracketed = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((p, i) => (i === 0 ? String(p) : `[${String(p)}]`)).join("")

type Problem = { readonly kind: "missing" | "unknown" } | { readonly kind: "invalid"; readonly message: string }

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) =>
    JSON.stringify(
      issue._tag === "MissingKey"
        ? { kind: "missing" }
        : issue._tag === "UnexpectedKey"
        ? { kind: "unknown" }
        : { kind: "invalid", message: SchemaIssue.defaultLeafHook(issue) }
    ),
  checkHook: (issue) => JSON.stringify({ kind: "invalid", message: SchemaIssue.defaultCheckHook(issue) ?? "" })
})

const toFailure = (issue: SchemaIssue.Issue): StripeFailure => {
  const first = formatter(issue).issues[0]
  const param = bracketed((first?.path ?? []).map((p) => (typeof p === "object" ? p.key : p)))
  const problem: Problem = (() => {
    try {
      return JSON.parse(first?.message ?? "") as Problem
    } catch {
      return { kind: "invalid", message: first?.message ?? "" }
    }
  })()
  const base = { status: 400, type: "invalid_request_error", param, beforeExecution: true } as const
  switch (problem.kind) {
    case "missing":
      return new StripeFailure({ ...base, code: "parameter_missing", message: `Missing required param: ${param}.` })
    case "unknown":
      return new StripeFailure({ ...base, code: "parameter_unknown", message: `Received unknown parameter: ${param}` })
    case "invalid":
      return problem.message.startsWith(INVALID_INTEGER)
        ? new StripeFailure({ ...base, code: "parameter_invalid_integer", message: `Invalid integer: ${param}` })
        : new StripeFailure({ ...base, message: `Invalid ${param}: ${problem.message}` })
  }
}

/** The request's parameters through the endpoint's Schema, or Stripe's 400 for the first problem found. */
export const decodeParams = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, params: FormTree) =>
  Schema.decodeUnknownEffect(schema)(params, { onExcessProperty: "error" }).pipe(
    Effect.mapError((e) => toFailure(e.issue))
  ) as Effect.Effect<S["Type"], StripeFailure>
