// Every HTTP route of the platform on one router: the API, its OpenAPI document and reference page, the edge.
import { Effect, Layer, type Option, type Redacted } from "effect"
import { refreshCapacityGauges } from "../../domain/ops/metrics.ts"
import type { Catalog } from "../../ports/Catalog.ts"
import { metricsRoute, requestMetrics, routeLabel } from "./metrics.ts"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import {
  AuthHandlers,
  PreferencesHandlers,
  RequestValidationLive,
  SessionHandlers
} from "./AccountsHandlers.ts"
import { Api, DatabaseOutage } from "./Api.ts"
import { AdminAuditHandlers, AdminCatalogHandlers, AdminDashboardHandlers, AdminCustomersHandlers, SecurityEventsHandlers } from "./AdminHandlers.ts"
import { AdminMoneyHandlers, AdminServicesHandlers } from "./AdminOperationsHandlers.ts"
import { AuthenticationLive, SessionGuard, SessionIfSignedInLive, StaffAuthenticationLive, staffGate } from "./Authentication.ts"
import { CatalogHandlers } from "./CatalogHandlers.ts"
import { type ConsoleRouteOptions, type ConsoleRouteServices, consoleRoute } from "./ConsoleRoute.ts"
import { type GameConsoleServices, gameConsoleRoute } from "./GameConsoleRoute.ts"
import { GameHandlers } from "./GameHandlers.ts"
import { type GameRelayOptions, type GameRelayServices, gameRelayRoutes } from "./GameRelayRoutes.ts"
import { BillingProfileHandlers, InvoicesHandlers } from "./InvoicingHandlers.ts"
import { PaymentHistoryHandlers, PaymentMethodHandlers, PaymentsHandlers } from "./PaymentsHandlers.ts"
import { OrdersHandlers, SubscriptionsHandlers, VpsHandlers } from "./ServicesHandlers.ts"
import { edgeMiddleware } from "./edge.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { securityMiddleware } from "./security.ts"
import { LegalHandlers, type LegalTexts } from "./LegalRoutes.ts"
import { staticRoutes } from "./StaticRoutes.ts"
import { SystemHandlers } from "./SystemHandlers.ts"

/** Declares the 503 only: handlers answer it themselves (mapDomainErrors, with its Retry-After and a log line). */
export const DatabaseOutageLive = Layer.succeed(DatabaseOutage, DatabaseOutage.of((httpEffect) => httpEffect))

const ApiRoutes = (publicUrl: string, legal: LegalTexts) =>
  HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide([
      AuthHandlers,
      SessionHandlers,
      PreferencesHandlers,
      CatalogHandlers,
      LegalHandlers(legal),
      OrdersHandlers,
      SubscriptionsHandlers,
      PaymentsHandlers,
      PaymentMethodHandlers(publicUrl),
      PaymentHistoryHandlers,
      BillingProfileHandlers,
      InvoicesHandlers,
      VpsHandlers,
      ...GameHandlers(publicUrl),
      SecurityEventsHandlers,
      AdminAuditHandlers,
      AdminCustomersHandlers,
      AdminCatalogHandlers,
      AdminDashboardHandlers,
      AdminServicesHandlers,
      AdminMoneyHandlers,
      SystemHandlers
    ]),
    Layer.provide([AuthenticationLive, StaffAuthenticationLive, SessionIfSignedInLive, RequestValidationLive, DatabaseOutageLive])
  )

/** The console WebSocket runs on the services captured when the routes are built. */
const ConsoleRoutes = (options: ConsoleRouteOptions) =>
  Layer.unwrap(Effect.map(Effect.context<ConsoleRouteServices>(), (services) =>
    consoleRoute(options).pipe(HttpRouter.provideRequest(Layer.succeedContext(services)))))

/** The game console and the files/backups relay, likewise. */
const GameRoutes = (options: HttpAppOptions) =>
  Layer.unwrap(Effect.map(Effect.context<GameConsoleServices | GameRelayServices>(), (services) =>
    Layer.mergeAll(gameConsoleRoute(options), gameRelayRoutes(options)).pipe(
      HttpRouter.provideRequest(Layer.succeedContext(services))
    )))

export interface HttpAppOptions extends ConsoleRouteOptions, GameRelayOptions {
  /** The built user panel, served with the single-page fallback; null: the API alone. */
  readonly webRoot: string | null
  /** The bearer token of GET /metrics; none: the route answers 404. */
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  /** The legal pages' texts (GET /api/legal/:page). */
  readonly legal: LegalTexts
}

/** GET /metrics, the capacity gauges read through the services captured when the routes are built. */
const MetricsRoutes = (options: HttpAppOptions) =>
  Layer.unwrap(Effect.map(Effect.context<Catalog>(), (services) =>
    metricsRoute(options.metricsToken, Effect.provideContext(refreshCapacityGauges, services))))

/** The reference page is served from the bundled Scalar script, without its web fonts: no request leaves for a CDN. */
const DocsRoutes = HttpApiScalar.layer(Api, { path: "/docs", scalar: { withDefaultFonts: false } })

/**
 * State-changing routes that other origins may call, as `"METHOD /path"` (see security.ts): only routes whose callers
 * prove who they are otherwise: Stripe's webhook (server to server, sending no `Origin`; its signature is checked).
 */
const CSRF_EXEMPT: ReadonlyArray<string> = ["POST /api/payments/stripe/webhook"]

export const HttpApp = (options: HttpAppOptions) =>
  Layer.mergeAll(
    Layer.mergeAll(
      ApiRoutes(options.publicUrl, options.legal),
      DocsRoutes,
      ConsoleRoutes(options),
      GameRoutes(options),
      MetricsRoutes(options),
      options.webRoot === null ? Layer.empty : staticRoutes({ root: options.webRoot })
    ).pipe(
      // Each route names its pattern for the request timer (requestMetrics).
      Layer.provide(routeLabel.layer)
    ),
    requestMetrics,
    Layer.unwrap(Effect.map(HttpSettings, edgeMiddleware)),
    staffGate,
    Layer.unwrap(Effect.map(HttpSettings, (settings) =>
      securityMiddleware(settings, { allowedOrigin: options.allowedOrigin, csrfExempt: CSRF_EXEMPT })))
  ).pipe(
    // One session check for the HttpApi's guard and the routes outside it.
    Layer.provide(SessionGuard.layer)
  )
