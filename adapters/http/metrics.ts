// The HTTP side of the metrics: every request's latency by method, route pattern and status (a global middleware
// times it; a route-level one names the route that matched), and GET /metrics, Prometheus text, behind a bearer
// token (no token configured: the route answers 404 as if it did not exist).
import { timingSafeEqual } from "node:crypto"
import { Context, Effect, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { httpRequestDuration } from "../../domain/ops/metrics.ts"
import { errorResponse } from "./errorMapping.ts"

/** Where the route that matched writes its pattern for the request's timer (one small object per request). */
class MatchedRoute extends Context.Service<MatchedRoute, { route: string | undefined }>()("zh/http/MatchedRoute") {}

/** The label of a request no route matched: a bounded set, never the path itself. */
const UNMATCHED = "unmatched"

/**
 * Times every request, whatever answers it (a route, the staff gate, the edge's own 404 or 413). On every request:
 * the update is synchronous on the fiber's context (no effect of its own), the series made once per label set.
 */
export const requestMetrics = HttpRouter.middleware((httpEffect) =>
  Effect.withFiber((fiber) => {
    const context = fiber.context
    const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
    const slot = { route: undefined as string | undefined }
    const start = performance.now()
    const record = (status: number) =>
      httpRequestDuration({ method: request.method, route: slot.route ?? UNMATCHED, status: String(status) })
        .updateUnsafe((performance.now() - start) / 1000, context)
    return Effect.provideService(httpEffect, MatchedRoute, slot).pipe(
      Effect.map((response) => {
        record(response.status)
        return response
      }),
      Effect.tapCause(() => Effect.sync(() => record(500)))
    )
  }), { global: true })

/** Names the matched route's pattern for the timer; applied to every route layer of the app. */
export const routeLabel = HttpRouter.middleware((httpEffect) =>
  Effect.withFiber((fiber) => {
    const slot = Context.getOrUndefined(fiber.context, MatchedRoute)
    const matched = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)
    if (slot !== undefined && matched !== undefined) slot.route = matched.route.path
    return httpEffect
  }))

const bearerOf = (header: string | undefined) => (header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined)

/** Constant-time: the answer's timing does not tell how much of a guessed token was right. */
const sameToken = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * GET /metrics: `refresh` sets the gauges read at scrape time first; then the whole registry in the Prometheus text
 * exposition format.
 */
export const metricsRoute = <E, R>(token: Option.Option<Redacted.Redacted<string>>, refresh: Effect.Effect<void, E, R>) =>
  HttpRouter.add("GET", "/metrics", (request) => {
    if (Option.isNone(token)) return Effect.succeed(errorResponse(404))
    const given = bearerOf(request.headers["authorization"])
    if (given === undefined || !sameToken(given, Redacted.value(token.value))) {
      return Effect.succeed(
        errorResponse(401, "UNAUTHENTICATED", "Send the metrics token: Authorization: Bearer <METRICS_TOKEN>.").pipe(
          HttpServerResponse.setHeader("www-authenticate", "Bearer")
        )
      )
    }
    return refresh.pipe(
      Effect.catchCause((cause) => Effect.logWarning("metrics: the capacity gauges could not be read", cause)),
      Effect.andThen(PrometheusMetrics.format()),
      Effect.map((body) => HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
    )
  })
