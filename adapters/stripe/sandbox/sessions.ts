// Checkout Sessions in `payment` and `setup` mode: creation, expiry (on demand and when `expires_at` passes), and what
// the hosted page does with a card: pay (or save) it, decline it, or ask for authentication first (the challenge).
import { Effect } from "effect"
import type { CheckoutSession, LineItem, PaymentIntent, PaymentMethod, SetupIntent } from "./objects.ts"
import { page, randomId } from "./objects.ts"
import type { CheckoutSessionCreate, SessionList } from "./params.ts"
import { cardError, failAttempt, keepForLater, newPaymentIntent, savePaymentMethod, succeedAttempt } from "./payments.ts"
import { getCustomer, getPaymentIntent, getPaymentMethod, getSession, getSetupIntent } from "./resources.ts"
import { clientSecret, emit, forgetOld, nowSeconds, type SessionExtras, stamp, type Store } from "./Store.ts"
import { invalid, type StripeFailure } from "./StripeFailure.ts"
import { attempt, readCard } from "./testCards.ts"

export const checkoutUrl = (store: Store, id: string) => `${store.baseUrl}/c/pay/${id}`

export const createSession = (store: Store, p: typeof CheckoutSessionCreate.Type) =>
  Effect.gen(function*() {
    const now = yield* nowSeconds(store)
    if (p.customer !== undefined) yield* getCustomer(store, p.customer, "customer")
    const expiresAt = p.expires_at ?? now + 24 * 3600
    if (expiresAt < now + 30 * 60 || expiresAt > now + 24 * 3600) {
      return yield* invalid("The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.", { param: "expires_at" })
    }
    const items = p.line_items ?? []
    if (p.mode === "payment" && items.length === 0) {
      return yield* invalid("You must specify either `line_items` or `price` in `payment` mode.", { param: "line_items", code: "parameter_missing" })
    }
    if (p.mode === "setup" && items.length > 0) return yield* invalid("You can not pass `line_items` in `setup` mode.", { param: "line_items" })
    if (p.mode === "setup" && p.payment_intent_data !== undefined) {
      return yield* invalid("You can not pass `payment_intent_data` in `setup` mode.", { param: "payment_intent_data" })
    }
    if (p.mode === "payment" && p.setup_intent_data !== undefined) {
      return yield* invalid("You can not pass `setup_intent_data` in `payment` mode.", { param: "setup_intent_data" })
    }
    const currencies = new Set(items.map((i) => i.price_data.currency.toLowerCase()))
    if (currencies.size > 1) return yield* invalid("All line items must have the same currency.", { param: "line_items" })
    const bad = items.findIndex((i) => i.quantity < 1 || i.price_data.unit_amount < 0)
    if (bad >= 0) return yield* invalid("Line item quantity must be at least 1 and unit_amount at least 0.", { param: `line_items[${bad}]` })
    const lineItems: Array<LineItem> = items.map((i) => ({
      id: randomId("li"),
      object: "item",
      amount_subtotal: i.quantity * i.price_data.unit_amount,
      amount_total: i.quantity * i.price_data.unit_amount,
      currency: i.price_data.currency.toLowerCase(),
      description: i.price_data.product_data.name,
      quantity: i.quantity,
      price: { id: randomId("price"), object: "price", currency: i.price_data.currency.toLowerCase(), unit_amount: i.price_data.unit_amount, product: randomId("prod", 14) }
    }))
    const total = p.mode === "payment" ? lineItems.reduce((sum, li) => sum + li.amount_total, 0) : null
    const id = `cs_test_${randomId("x", 58).slice(2)}`
    const session: CheckoutSession = {
      id,
      object: "checkout.session",
      created: now,
      livemode: false,
      mode: p.mode,
      status: "open",
      payment_status: p.mode === "payment" ? "unpaid" : "no_payment_required",
      customer: p.customer ?? null,
      customer_email: p.customer_email ?? null,
      client_reference_id: p.client_reference_id ?? null,
      success_url: p.success_url ?? null,
      cancel_url: p.cancel_url ?? null,
      url: checkoutUrl(store, id),
      expires_at: expiresAt,
      amount_subtotal: total,
      amount_total: total,
      currency: [...currencies][0] ?? p.currency?.toLowerCase() ?? null,
      metadata: { ...p.metadata },
      payment_intent: null,
      setup_intent: null
    }
    store.sessions.set(id, session)
    store.sessionExtras.set(id, {
      lineItems,
      setupFutureUsage: p.payment_intent_data?.setup_future_usage ?? null,
      paymentIntentDescription: p.payment_intent_data?.description ?? null,
      paymentIntentMetadata: { ...p.payment_intent_data?.metadata },
      setupIntentMetadata: { ...p.setup_intent_data?.metadata },
      awaitingAuthentication: false
    })
    return session
  })

const extrasOf = (store: Store, session: CheckoutSession): SessionExtras => store.sessionExtras.get(session.id)!

export const lineItems = (store: Store, url: string, id: string) =>
  Effect.map(getSession(store, id), (session) => page(url, extrasOf(store, session).lineItems, { limit: 100 }))

export const listSessions = (store: Store, url: string, p: typeof SessionList.Type) =>
  Effect.sync(() => {
    const all = [...store.sessions.values()].reverse().filter((s) =>
      (p.customer === undefined || s.customer === p.customer) && (p.payment_intent === undefined || s.payment_intent === p.payment_intent)
    )
    return page(url, all, { limit: p.limit, startingAfter: p.starting_after, endingBefore: p.ending_before })
  })

/** Ends an open session: `expired`, no URL any more, its unpaid payment intent canceled. */
export const expireSession = (store: Store, id: string) =>
  Effect.gen(function*() {
    const session = yield* getSession(store, id)
    if (session.status !== "open") {
      return yield* invalid(
        `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`,
        { code: "checkout_session_not_open" }
      )
    }
    session.status = "expired"
    session.url = null
    extrasOf(store, session).awaitingAuthentication = false
    const pi = session.payment_intent === null ? undefined : store.paymentIntents.get(session.payment_intent)
    if (pi !== undefined && pi.status !== "succeeded") {
      pi.status = "canceled"
      pi.next_action = null
      yield* emit(store, "payment_intent.canceled", pi)
    }
    yield* emit(store, "checkout.session.expired", session)
    return session
  })

/**
 * Expires every open session whose `expires_at` has passed (the sandbox's clock, advanced or not), and forgets the
 * idempotency keys and events Stripe no longer keeps.
 */
export const expireDue = (store: Store) =>
  Effect.gen(function*() {
    yield* forgetOld(store)
    const now = yield* nowSeconds(store)
    const due = [...store.sessions.values()].filter((s) => s.status === "open" && s.expires_at <= now)
    for (const s of due) yield* expireSession(store, s.id)
    return due.length
  })

/** What the hosted page answers after a submission. */
export type PageResult =
  | { readonly kind: "redirect"; readonly location: string }
  | { readonly kind: "form"; readonly status: number; readonly message: string | undefined }
  | { readonly kind: "challenge" }
  | { readonly kind: "closed"; readonly session: CheckoutSession }

const successLocation = (session: CheckoutSession): PageResult =>
  session.success_url === null
    ? { kind: "closed", session }
    : { kind: "redirect", location: session.success_url.replaceAll("{CHECKOUT_SESSION_ID}", session.id) }

const complete = (store: Store, session: CheckoutSession) =>
  Effect.gen(function*() {
    session.status = "complete"
    session.url = null
    if (session.mode === "payment") session.payment_status = "paid"
    extrasOf(store, session).awaitingAuthentication = false
    yield* emit(store, "checkout.session.completed", session)
    return successLocation(session)
  })

const paid = (store: Store, session: CheckoutSession, pi: PaymentIntent, pm: PaymentMethod) =>
  Effect.gen(function*() {
    yield* succeedAttempt(store, pi, pm)
    const usage = extrasOf(store, session).setupFutureUsage
    if (usage !== null) yield* keepForLater(store, pm, session.customer, usage === "off_session")
    return yield* complete(store, session)
  })

const saved = (store: Store, session: CheckoutSession, si: SetupIntent, pm: PaymentMethod) =>
  Effect.gen(function*() {
    si.status = "succeeded"
    si.payment_method = pm.id
    si.last_setup_error = null
    yield* keepForLater(store, pm, session.customer, true)
    yield* emit(store, "setup_intent.succeeded", si)
    return yield* complete(store, session)
  })

const declinedForm = (failure: StripeFailure): PageResult => ({ kind: "form", status: 402, message: failure.message })

const setupFailed = (store: Store, si: SetupIntent, pm: PaymentMethod, code: string, declineCode: string | undefined) =>
  Effect.gen(function*() {
    si.status = "requires_payment_method"
    si.last_setup_error = cardError(code, declineCode, pm)
    yield* emit(store, "setup_intent.setup_failed", si)
    return { kind: "form", status: 402, message: si.last_setup_error.message } satisfies PageResult
  })

const intentOf = (store: Store, session: CheckoutSession) =>
  Effect.gen(function*() {
    if (session.payment_intent !== null) return yield* getPaymentIntent(store, session.payment_intent)
    const extras = extrasOf(store, session)
    const pi = yield* newPaymentIntent(store, {
      amount: session.amount_total ?? 0,
      currency: session.currency ?? "eur",
      customer: session.customer,
      description: extras.paymentIntentDescription,
      metadata: extras.paymentIntentMetadata,
      setupFutureUsage: extras.setupFutureUsage
    })
    session.payment_intent = pi.id
    return pi
  })

const setupIntentOf = (store: Store, session: CheckoutSession) =>
  Effect.gen(function*() {
    if (session.setup_intent !== null) return yield* getSetupIntent(store, session.setup_intent)
    const id = randomId("seti")
    const si: SetupIntent = {
      ...(yield* stamp(store, id, "setup_intent")),
      customer: session.customer,
      payment_method: null,
      status: "requires_payment_method",
      usage: "off_session",
      client_secret: clientSecret(id),
      metadata: { ...extrasOf(store, session).setupIntentMetadata },
      last_setup_error: null
    }
    store.setupIntents.set(id, si)
    yield* emit(store, "setup_intent.created", si)
    session.setup_intent = id
    return si
  })

/** The page's form, posted: `card`, `exp` (MM/YY), `cvc`. */
export const submitCard = (store: Store, id: string, fields: { readonly card: string; readonly exp: string; readonly cvc: string }) =>
  Effect.gen(function*() {
    const session = yield* getSession(store, id)
    if (session.status !== "open") return { kind: "closed", session } satisfies PageResult
    const card = readCard(fields, new Date((yield* nowSeconds(store)) * 1000))
    if ("error" in card) return { kind: "form", status: 400, message: card.error } satisfies PageResult
    const pm = yield* savePaymentMethod(store, card)
    const settingUp = session.mode === "setup"
    const outcome = attempt(card.behaviour, { offSession: false, setUpForOffSession: false, settingUp })
    if (settingUp) {
      const si = yield* setupIntentOf(store, session)
      si.payment_method = pm.id
      if (outcome.kind === "pass") return yield* saved(store, session, si, pm)
      if (outcome.kind === "decline") return yield* setupFailed(store, si, pm, "card_declined", outcome.declineCode)
      si.status = "requires_action"
      extrasOf(store, session).awaitingAuthentication = true
      yield* emit(store, "setup_intent.requires_action", si)
      return { kind: "challenge" } satisfies PageResult
    }
    const pi = yield* intentOf(store, session)
    pi.payment_method = pm.id
    if (outcome.kind === "pass") return yield* paid(store, session, pi, pm)
    if (outcome.kind === "decline") return declinedForm(yield* failAttempt(store, pi, pm, "card_declined", outcome.declineCode))
    pi.status = "requires_action"
    extrasOf(store, session).awaitingAuthentication = true
    yield* emit(store, "payment_intent.requires_action", pi)
    return { kind: "challenge" } satisfies PageResult
  })

/** The challenge page, posted: `outcome=approve` completes the attempt, `outcome=fail` fails it. */
export const answerChallenge = (store: Store, id: string, approve: boolean) =>
  Effect.gen(function*() {
    const session = yield* getSession(store, id)
    if (session.status !== "open") return { kind: "closed", session } satisfies PageResult
    const extras = extrasOf(store, session)
    if (!extras.awaitingAuthentication) return { kind: "form", status: 400, message: "There is no authentication to answer." } satisfies PageResult
    extras.awaitingAuthentication = false
    if (session.mode === "setup") {
      const si = yield* getSetupIntent(store, session.setup_intent ?? "")
      const pm = yield* getPaymentMethod(store, si.payment_method ?? "")
      if (approve) return yield* saved(store, session, si, pm)
      return yield* setupFailed(store, si, pm, "setup_intent_authentication_failure", undefined)
    }
    const pi = yield* getPaymentIntent(store, session.payment_intent ?? "")
    const pm = yield* getPaymentMethod(store, pi.payment_method ?? "")
    if (approve) return yield* paid(store, session, pi, pm)
    return declinedForm(yield* failAttempt(store, pi, pm, "payment_intent_authentication_failure", undefined))
  })
