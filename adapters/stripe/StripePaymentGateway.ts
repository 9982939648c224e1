// The payment gateway on Stripe (reference/stripe.md), through the official SDK: a Customer per user, Checkout
// Sessions (payment mode saving the card, setup mode to change it), off-session PaymentIntents, Refunds, and webhook
// events verified with `constructEvent`. The keys come from `credentials` at each call (sealed upstream secrets the
// operator can change while the server runs); without a secret key the gateway is not configured.
import { Effect, Layer, Option, Redacted } from "effect"
import Stripe from "stripe"
import {
  type CheckoutOutcome,
  NotificationSignatureInvalid,
  PaymentAuthenticationRequired,
  PaymentDeclined,
  PaymentGateway,
  PaymentsNotConfigured,
  PaymentUnavailable
} from "../../ports/PaymentGateway.ts"
import { notificationOf } from "./notifications.ts"

export interface StripeCredentials {
  readonly secretKey: Redacted.Redacted<string>
  /** The endpoint's current secret first, then the previous one while a rotation is under way. */
  readonly webhookSecrets: ReadonlyArray<Redacted.Redacted<string>>
}

/** Where the API is, when it is not Stripe's own (the sandbox Stripe on loopback). */
export interface StripeApi {
  readonly host: string
  readonly port: number
  readonly protocol: "http" | "https"
}

/** `STRIPE_API_URL` as the SDK's options. */
export const apiAt = (url: URL): StripeApi => ({
  host: url.hostname.replace(/^\[|\]$/g, ""),
  port: Number(url.port || (url.protocol === "http:" ? 80 : 443)),
  protocol: url.protocol === "http:" ? "http" : "https"
})

export interface StripeGatewayOptions {
  /** The keys now; none while the operator has not stored a secret key. */
  readonly credentials: Effect.Effect<Option.Option<StripeCredentials>>
  /** Another API host (the sandbox Stripe on loopback); Stripe's own by default. */
  readonly api?: StripeApi | undefined
  /** Per request, in milliseconds (default 20 000). */
  readonly timeoutMs?: number | undefined
  /** The SDK's own retries of network failures and 5xx, each with the same Idempotency-Key (default 2). */
  readonly maxNetworkRetries?: number | undefined
  /** Another transport than Node's own (the sandbox Stripe without sockets: `Stripe.createFetchHttpClient`). */
  readonly httpClient?: Stripe.HttpClient | undefined
}

/** Stripe takes a Checkout Session's `expires_at` between 30 minutes and 24 hours ahead (a margin kept on each side). */
const sessionExpiry = (at: Date | undefined, now: number): number | undefined => {
  if (at === undefined) return undefined
  const seconds = Math.floor(at.getTime() / 1000)
  const from = Math.floor(now / 1000)
  return seconds >= from + 31 * 60 && seconds <= from + 23 * 3600 ? seconds : undefined
}

/** Stripe's documented tolerance: a signed event more than 5 minutes old is refused (replay protection). */
export const WEBHOOK_TOLERANCE_SECONDS = 300

/** The SDK error's kind and code only: its message may quote parameters (an e-mail address). */
const describe = (e: unknown) =>
  e instanceof Stripe.errors.StripeError ? `${e.type}${e.code === undefined ? "" : ` (${e.code})`}` : "unexpected failure"

/** What a failed call means to billing: unavailable, unless the card itself was refused. */
const unavailable = (operation: string) => (e: unknown) =>
  Effect.andThen(
    Effect.logWarning(`Stripe ${operation} failed: ${describe(e)}`),
    Effect.fail(new PaymentUnavailable())
  )

const refusal = (e: Stripe.errors.StripeError) =>
  e.code === "authentication_required"
    ? new PaymentAuthenticationRequired()
    : new PaymentDeclined({ reason: (e.decline_code ?? e.code ?? "card_declined").replace(/_/g, " ") })

export const make = (options: StripeGatewayOptions) => {
  let client: { readonly key: string; readonly stripe: Stripe } | undefined
  const stripeFor = (key: string) => {
    if (client?.key !== key) {
      client = {
        key,
        stripe: new Stripe(key, {
          ...(options.api === undefined ? {} : options.api),
          ...(options.httpClient === undefined ? {} : { httpClient: options.httpClient }),
          timeout: options.timeoutMs ?? 20_000,
          maxNetworkRetries: options.maxNetworkRetries ?? 2,
          telemetry: false
        })
      }
    }
    return client.stripe
  }
  const configured = Effect.flatMap(options.credentials, Option.match({
    onNone: () => Effect.fail(new PaymentsNotConfigured()),
    onSome: Effect.succeed
  }))
  /** One SDK call; any failure is the service being unavailable (logged without parameters). */
  const call = <A>(operation: string, f: (stripe: Stripe) => Promise<A>) =>
    Effect.flatMap(
      Effect.catchTag(configured, "PaymentsNotConfigured", () => Effect.fail(new PaymentUnavailable())),
      (c) =>
        Effect.tryPromise({ try: () => f(stripeFor(Redacted.value(c.secretKey))), catch: (e) => e }).pipe(
          Effect.catch(unavailable(operation))
        )
    )

  /** The customer's newest card (Stripe lists newest first); none for a customer Stripe does not know. */
  const newestCard = (customer: string) =>
    call("payment method lookup", async (s) => {
      try {
        return Option.fromNullishOr((await s.customers.listPaymentMethods(customer, { type: "card", limit: 1 })).data[0])
      } catch (e) {
        if (e instanceof Stripe.errors.StripeInvalidRequestError && e.code === "resource_missing") return Option.none()
        throw e
      }
    })

  return PaymentGateway.of({
    ready: Effect.asVoid(configured),
    createCustomer: (request) =>
      call("customer creation", (s) =>
        s.customers.create({ email: request.email, metadata: { userId: request.userId } }, { idempotencyKey: request.idempotencyKey })).pipe(
          Effect.map((c) => ({ customer: c.id }))
        ),
    checkout: (request) =>
      call("checkout creation", (s) => {
        const expiresAt = sessionExpiry(request.expiresAt, Date.now())
        return s.checkout.sessions.create({
          mode: "payment",
          customer: request.customer,
          client_reference_id: request.orderId,
          line_items: [{
            quantity: 1,
            price_data: { currency: "eur", unit_amount: request.amountCents, product_data: { name: request.description } }
          }],
          payment_intent_data: {
            setup_future_usage: "off_session",
            metadata: { orderId: request.orderId, idempotency_key: request.idempotencyKey }
          },
          success_url: request.successUrl,
          cancel_url: request.cancelUrl,
          ...(expiresAt === undefined ? {} : { expires_at: expiresAt })
        }, { idempotencyKey: request.idempotencyKey })
      }).pipe(
          Effect.flatMap((session) =>
            session.url === null ? unavailable("checkout creation")("no url") : Effect.succeed({ session: session.id, url: session.url })
          )
        ),
    expireCheckout: (session) =>
      call("checkout expiry", async (s) => {
        try {
          await s.checkout.sessions.expire(session)
        } catch (e) {
          // Closed already (paid, or expired by Stripe): what it became is read below.
          if (!(e instanceof Stripe.errors.StripeInvalidRequestError && e.code === "checkout_session_not_open")) throw e
        }
        return await s.checkout.sessions.retrieve(session)
      }).pipe(Effect.map((closed): CheckoutOutcome => {
        const payment = closed.payment_intent === null ? null : typeof closed.payment_intent === "string" ? closed.payment_intent : closed.payment_intent.id
        if (closed.status === "complete" && closed.payment_status === "paid" && payment !== null) {
          return { _tag: "Paid", payment, amountCents: closed.amount_total ?? 0 }
        }
        return closed.status === "expired" ? { _tag: "Expired" } : { _tag: "Processing" }
      })),
    cardPage: (request) =>
      call("card page creation", (s) =>
        s.checkout.sessions.create({
          mode: "setup",
          customer: request.customer,
          currency: "eur",
          success_url: request.returnUrl,
          cancel_url: request.returnUrl
        })).pipe(
          Effect.flatMap((session) => session.url === null ? unavailable("card page creation")("no url") : Effect.succeed({ url: session.url }))
        ),
    paymentLink: (request) =>
      call("payment page creation", (s) =>
        s.checkout.sessions.create({
          mode: "payment",
          customer: request.customer,
          line_items: [{
            quantity: 1,
            price_data: { currency: "eur", unit_amount: request.amountCents, product_data: { name: request.description } }
          }],
          // What the completion event names (notifications.ts): the renewal it pays.
          metadata: { subscriptionId: request.subscriptionId, periodStart: request.periodStart },
          payment_intent_data: {
            setup_future_usage: "off_session",
            metadata: { subscriptionId: request.subscriptionId, periodStart: request.periodStart, idempotency_key: request.idempotencyKey }
          },
          success_url: request.returnUrl,
          cancel_url: request.returnUrl
        }, { idempotencyKey: request.idempotencyKey })).pipe(
          Effect.flatMap((session) => session.url === null ? unavailable("payment page creation")("no url") : Effect.succeed({ url: session.url }))
        ),
    charge: (request) =>
      Effect.gen(function*() {
        const card = yield* newestCard(request.customer)
        if (Option.isNone(card)) return yield* new PaymentDeclined({ reason: "no saved card" })
        const attempt = yield* configured.pipe(
          Effect.catchTag("PaymentsNotConfigured", () => Effect.fail(new PaymentUnavailable())),
          Effect.flatMap((c) =>
            Effect.tryPromise({
              try: () =>
                stripeFor(Redacted.value(c.secretKey)).paymentIntents.create({
                  amount: request.amountCents,
                  currency: "eur",
                  customer: request.customer,
                  payment_method: card.value.id,
                  off_session: true,
                  confirm: true,
                  description: request.description,
                  metadata: { idempotency_key: request.idempotencyKey }
                }, { idempotencyKey: request.idempotencyKey }),
              catch: (e) => e
            })
          ),
          Effect.catch((e): Effect.Effect<never, PaymentDeclined | PaymentAuthenticationRequired | PaymentUnavailable> =>
            e instanceof Stripe.errors.StripeCardError ? Effect.fail(refusal(e)) : unavailable("charge")(e)
          )
        )
        switch (attempt.status) {
          case "succeeded":
          case "processing":
            return { reference: attempt.id }
          case "requires_action":
            return yield* new PaymentAuthenticationRequired()
          default:
            return yield* new PaymentDeclined({
              reason: (attempt.last_payment_error?.decline_code ?? attempt.last_payment_error?.code ?? attempt.status).replace(/_/g, " ")
            })
        }
      }),
    findCharge: (idempotencyKey) =>
      call("charge lookup", (s) =>
        s.paymentIntents.search({ query: `metadata['idempotency_key']:'${idempotencyKey.replace(/'/g, "\\'")}'`, limit: 10 })).pipe(
          Effect.map((found) =>
            Option.map(
              Option.fromNullishOr(found.data.find((pi) => pi.status === "succeeded")),
              (pi) => ({ reference: pi.id, amountCents: pi.amount_received })
            )
          )
        ),
    refund: (request) =>
      call("refund", (s) =>
        s.refunds.create({ payment_intent: request.charge, amount: request.amountCents }, { idempotencyKey: request.idempotencyKey })).pipe(
          Effect.map((r) => ({ reference: r.id }))
        ),
    savedCard: (customer) =>
      Effect.map(newestCard(customer), Option.flatMap((pm) =>
        Option.map(Option.fromNullishOr(pm.card), (card) => ({
          brand: card.brand,
          last4: card.last4,
          expMonth: card.exp_month,
          expYear: card.exp_year
        })))),
    verifyNotification: (request) =>
      Effect.flatMap(configured, (c) => {
        for (const secret of c.webhookSecrets) {
          try {
            // Any v1 signature of the header may match (Stripe signs with both secrets during its own rotation).
            const event = Stripe.webhooks.constructEvent(
              request.payload,
              request.signature,
              Redacted.value(secret),
              WEBHOOK_TOLERANCE_SECONDS
            )
            return Effect.succeed(notificationOf(event))
          } catch {
            // Not this secret's signature (or not Stripe's at all): try the next one.
          }
        }
        return Effect.fail(new NotificationSignatureInvalid())
      })
  })
}

export const layer = (options: StripeGatewayOptions): Layer.Layer<PaymentGateway> =>
  Layer.sync(PaymentGateway, () => make(options))
