// The sandbox's HTTP surface as routes, served on loopback by SandboxStripe or called without sockets through the
// simulation's `fetch`: the API under /v1 (with the armed API faults) and the hosted checkout and authentication pages.
import { Duration, Effect, Layer } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { checkoutForm, challengePage, closedPage, messagePage } from "./checkoutPage.ts"
import type { Faults } from "./Faults.ts"
import type { CheckoutSession } from "./objects.ts"
import { answerAuthentication } from "./intents.ts"
import { answerChallenge, expireDue, type PageResult, submitCard } from "./sessions.ts"
import type { Store } from "./Store.ts"
import type { StripeApi } from "./StripeApi.ts"

const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => new URLSearchParams(text))

const html = (body: string, status = 200) => HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8" })

const what = (session: CheckoutSession) => (session.mode === "setup" ? "card" : "payment")

/** The page a session shows now: the form (with a message), the challenge while one waits, or its end. */
const sessionPage = (store: Store, session: CheckoutSession, message?: string, status = 200) => {
  const action = `/c/pay/${session.id}`
  if (session.status !== "open") return html(closedPage(session), session.status === "expired" ? 410 : 200)
  if (store.sessionExtras.get(session.id)?.awaitingAuthentication === true) return html(challengePage(action, what(session)))
  return html(checkoutForm(session, action, message), status)
}

const pageAnswer = (store: Store, session: CheckoutSession, result: PageResult) =>
  result.kind === "redirect"
    ? HttpServerResponse.redirect(result.location, { status: 303 })
    : result.kind === "form"
    ? sessionPage(store, session, result.message, result.status)
    : sessionPage(store, session)

const pageRoutes = (store: Store) => {
  const notFound = html(messagePage("Not found", "This page does not exist."), 404)
  const checkoutGet = HttpRouter.add("GET", "/c/pay/:id", () =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      return yield* store.serial(Effect.gen(function*() {
        yield* Effect.orDie(expireDue(store))
        const session = store.sessions.get(id)
        return session === undefined ? notFound : sessionPage(store, session)
      }))
    }))
  const checkoutPost = HttpRouter.add("POST", "/c/pay/:id", (request) =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      const form = yield* formOf(request)
      const outcome = form.get("outcome")
      return yield* store.serial(Effect.gen(function*() {
        yield* Effect.orDie(expireDue(store))
        const session = store.sessions.get(id)
        if (session === undefined) return notFound
        const result = outcome === null
          ? yield* submitCard(store, id, { card: form.get("card") ?? "", exp: form.get("exp") ?? "", cvc: form.get("cvc") ?? "" })
          : yield* answerChallenge(store, id, outcome === "approve")
        return pageAnswer(store, session, result)
      }))
    }).pipe(Effect.catch(() => Effect.succeed(notFound))))
  const authenticateGet = HttpRouter.add("GET", "/authenticate/:id", () =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      const pi = store.paymentIntents.get(id)
      if (pi === undefined) return notFound
      return pi.status === "requires_action"
        ? html(challengePage(`/authenticate/${id}`, "payment"))
        : html(messagePage("Authentication", "Nothing to authenticate."))
    }))
  const authenticatePost = HttpRouter.add("POST", "/authenticate/:id", (request) =>
    Effect.gen(function*() {
      const id = (yield* HttpRouter.params)["id"] ?? ""
      const form = yield* formOf(request)
      const answer = yield* store.serial(answerAuthentication(store, id, form.get("outcome") === "approve"))
      if (answer.returnUrl !== null && answer.answered) return HttpServerResponse.redirect(answer.returnUrl, { status: 303 })
      return html(messagePage("Authentication", answer.pi.status === "succeeded" ? "Payment authenticated." : "Authentication failed."))
    }).pipe(Effect.catch(() => Effect.succeed(notFound))))
  return Layer.mergeAll(checkoutGet, checkoutPost, authenticateGet, authenticatePost)
}

const apiRoute = (api: StripeApi, faults: Faults) =>
  HttpRouter.add("*", "/v1/*", (request) =>
    Effect.gen(function*() {
      const url = new URL(request.url, "http://sandbox")
      const fault = faults.takeApi(url.pathname)
      if (fault?.kind === "hang") return yield* Effect.never
      if (fault?.kind === "fail") {
        const body = { error: { type: "api_error", message: "An unknown error occurred, please try again (sandbox fault)." } }
        return HttpServerResponse.text(JSON.stringify(body), { status: fault.status, contentType: "application/json" })
      }
      const body = request.method === "POST" ? yield* formOf(request) : new URLSearchParams()
      const answer = yield* api.handle({
        method: request.method,
        path: url.pathname,
        query: url.searchParams,
        body,
        authorization: request.headers["authorization"],
        idempotencyKey: request.headers["idempotency-key"]
      })
      if (fault?.kind === "slow") yield* Effect.sleep(Duration.millis(fault.ms))
      return HttpServerResponse.text(JSON.stringify(answer.body, null, 2), {
        status: answer.status,
        headers: answer.headers,
        contentType: "application/json"
      })
    }))


/** Every route of the sandbox over one state. */
export const sandboxRoutes = (store: Store, api: StripeApi, faults: Faults) => Layer.mergeAll(apiRoute(api, faults), pageRoutes(store))
