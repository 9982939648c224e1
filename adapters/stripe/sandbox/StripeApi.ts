// The REST subset, without sockets: a request (method, path, query, form body, Authorization, Idempotency-Key) in, a
// status and JSON body out. Bearer secret key (401 otherwise), parameters through each endpoint's Schema, `expand[]`,
// and Idempotency-Key semantics (reference/stripe.md § Idempotency): the first response is replayed for the same
// key and parameters, the same key with other parameters is a 400 `idempotency_error`.
import { Effect, type Schema } from "effect"
import { type FormTree, fingerprint, parseForm } from "./form.ts"
import { createPaymentIntent, createRefund } from "./intents.ts"
import * as P from "./params.ts"
import {
  createCustomer,
  createEndpoint,
  deleteEndpoint,
  getCharge,
  getCustomer,
  getDispute,
  getEndpoint,
  getEvent,
  getPaymentIntent,
  getPaymentMethod,
  getRefund,
  getSession,
  getSetupIntent,
  listEndpoints,
  listCustomers,
  listEvents,
  listPaymentMethods,
  searchPaymentIntents,
  updateCustomer
} from "./resources.ts"
import { createSession, expireSession, lineItems, listSessions } from "./sessions.ts"
import { API_VERSION, expand, nowSeconds, type Store } from "./Store.ts"
import { StripeFailure, unknownPath } from "./StripeFailure.ts"
import { randomId } from "./objects.ts"

export interface ApiRequest {
  readonly method: string
  /** The path without the query, e.g. `/v1/customers/cus_x`. */
  readonly path: string
  readonly query: URLSearchParams
  readonly body: URLSearchParams
  readonly authorization: string | undefined
  readonly idempotencyKey: string | undefined
}

export interface ApiResponse {
  readonly status: number
  readonly body: unknown
  readonly headers: Readonly<Record<string, string>>
}

type Handler = (store: Store, ids: ReadonlyArray<string>, params: FormTree, url: string) => Effect.Effect<object, StripeFailure>

const with_ = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  run: (store: Store, ids: ReadonlyArray<string>, p: S["Type"], url: string) => Effect.Effect<object, StripeFailure>
): Handler =>
(store, ids, params, url) => Effect.flatMap(P.decodeParams(schema, params), (p) => run(store, ids, p, url))

const id = (ids: ReadonlyArray<string>) => ids[0] ?? ""

const routes: ReadonlyArray<readonly [string, RegExp, Handler]> = [
  ["POST", /^\/v1\/customers$/, with_(P.CustomerCreate, (s, _, p) => createCustomer(s, p))],
  ["GET", /^\/v1\/customers$/, with_(P.CustomerList, (s, _, p, url) => listCustomers(s, url, p))],
  ["GET", /^\/v1\/customers\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getCustomer(s, id(ids)))],
  ["POST", /^\/v1\/customers\/([^/]+)$/, with_(P.CustomerUpdate, (s, ids, p) => updateCustomer(s, id(ids), p))],
  ["GET", /^\/v1\/customers\/([^/]+)\/payment_methods$/, with_(P.PaymentMethodList, (s, ids, p, url) => listPaymentMethods(s, url, p, id(ids)))],
  ["POST", /^\/v1\/checkout\/sessions$/, with_(P.CheckoutSessionCreate, (s, _, p) => createSession(s, p))],
  ["GET", /^\/v1\/checkout\/sessions$/, with_(P.SessionList, (s, _, p, url) => listSessions(s, url, p))],
  ["GET", /^\/v1\/checkout\/sessions\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getSession(s, id(ids)))],
  ["POST", /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/, with_(P.Retrieve, (s, ids) => expireSession(s, id(ids)))],
  ["GET", /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/, with_(P.PlainList, (s, ids, _, url) => lineItems(s, url, id(ids)))],
  ["POST", /^\/v1\/payment_intents$/, with_(P.PaymentIntentCreate, (s, _, p) => createPaymentIntent(s, p))],
  ["GET", /^\/v1\/payment_intents\/search$/, with_(P.Search, (s, _, p, url) => searchPaymentIntents(s, url, p))],
  ["GET", /^\/v1\/payment_intents\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getPaymentIntent(s, id(ids)))],
  ["GET", /^\/v1\/payment_methods$/, with_(P.PaymentMethodList, (s, _, p, url) => listPaymentMethods(s, url, p, undefined))],
  ["GET", /^\/v1\/payment_methods\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getPaymentMethod(s, id(ids)))],
  ["GET", /^\/v1\/setup_intents\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getSetupIntent(s, id(ids)))],
  ["GET", /^\/v1\/charges\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getCharge(s, id(ids)))],
  ["POST", /^\/v1\/refunds$/, with_(P.RefundCreate, (s, _, p) => createRefund(s, p))],
  ["GET", /^\/v1\/refunds\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getRefund(s, id(ids)))],
  ["GET", /^\/v1\/disputes\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getDispute(s, id(ids)))],
  ["GET", /^\/v1\/events$/, with_(P.EventList, (s, _, p, url) => listEvents(s, url, p))],
  ["GET", /^\/v1\/events\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getEvent(s, id(ids)))],
  ["POST", /^\/v1\/webhook_endpoints$/, with_(P.WebhookEndpointCreate, (s, _, p) => createEndpoint(s, p))],
  ["GET", /^\/v1\/webhook_endpoints$/, with_(P.PlainList, (s, _, p, url) => listEndpoints(s, url, p))],
  ["GET", /^\/v1\/webhook_endpoints\/([^/]+)$/, with_(P.Retrieve, (s, ids) => getEndpoint(s, id(ids)))],
  ["DELETE", /^\/v1\/webhook_endpoints\/([^/]+)$/, with_(P.Retrieve, (s, ids) => deleteEndpoint(s, id(ids)))]
]

const mask = (key: string) => `${key.slice(0, key.indexOf("_", 3) + 1)}${"*".repeat(12)}${key.slice(-4)}`

const authenticate = (authorization: string | undefined, secretKey: string): StripeFailure | undefined => {
  const given = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1]
  if (given === secretKey) return undefined
  return new StripeFailure({
    status: 401,
    type: "invalid_request_error",
    message: given === undefined
      ? "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."
      : `Invalid API Key provided: ${mask(given)}`
  })
}

/** The API over `store`, answering only callers that present `secretKey`. */
export const makeStripeApi = (store: Store, secretKey: string) => {
  const idempotent = store.idempotent

  const execute = (request: ApiRequest, params: FormTree): Effect.Effect<{ readonly status: number; readonly body: unknown; readonly keep: boolean }> => {
    const route = routes.find(([method, pattern]) => method === request.method && pattern.test(request.path))
    if (route === undefined) {
      const failure = unknownPath(request.method, request.path)
      return Effect.succeed({ status: failure.status, body: failure.body, keep: false })
    }
    const ids = (route[1].exec(request.path) ?? []).slice(1).map(decodeURIComponent)
    const paths = Array.isArray(params["expand"]) ? params["expand"].filter((p): p is string => typeof p === "string") : []
    return route[2](store, ids, params, request.path).pipe(
      Effect.map((object) => ({ status: 200, body: expand(store, object, paths), keep: true })),
      Effect.catch((failure) => Effect.succeed({ status: failure.status, body: failure.body, keep: failure.beforeExecution !== true }))
    )
  }

  const handle = (request: ApiRequest): Effect.Effect<ApiResponse> =>
    store.serial(Effect.gen(function*() {
      const headers: Record<string, string> = { "Request-Id": randomId("req", 14), "Stripe-Version": API_VERSION }
      const denied = authenticate(request.authorization, secretKey)
      if (denied !== undefined) return { status: denied.status, body: denied.body, headers }
      const params = parseForm(request.method === "POST" ? request.body : request.query)
      const key = request.method === "POST" ? request.idempotencyKey : undefined
      if (key === undefined) {
        const { body, status } = yield* execute(request, params)
        return { status, body, headers }
      }
      headers["Idempotency-Key"] = key
      if (key.length > 255) {
        const failure = new StripeFailure({ status: 400, type: "invalid_request_error", message: "Idempotency keys can be at most 255 characters long." })
        return { status: failure.status, body: failure.body, headers }
      }
      const print = fingerprint(request.method, request.path, request.body)
      const previous = idempotent.get(key)
      if (previous !== undefined) {
        if (previous.fingerprint !== print) {
          const failure = new StripeFailure({
            status: 400,
            type: "idempotency_error",
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`
          })
          return { status: failure.status, body: failure.body, headers }
        }
        return { status: previous.status, body: previous.body, headers: { ...headers, "Idempotent-Replayed": "true" } }
      }
      const { body, keep, status } = yield* execute(request, params)
      // Stripe keeps the result of every request whose endpoint ran, errors included; not a validation failure.
      if (keep) idempotent.set(key, { at: yield* nowSeconds(store), fingerprint: print, status, body })
      return { status, body, headers }
    }))

  return { handle }
}

export type StripeApi = ReturnType<typeof makeStripeApi>
