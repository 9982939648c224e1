// Every HTTP route of the platform on one router: the API, its OpenAPI document and reference page, the edge.
import { Effect, Layer } from "effect"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import {
  AuthenticationLive,
  AuthHandlers,
  PreferencesHandlers,
  RequestValidationLive,
  SessionHandlers
} from "./AccountsHandlers.ts"
import { Api } from "./Api.ts"
import { edgeMiddleware } from "./edge.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { SystemHandlers } from "./SystemHandlers.ts"

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([AuthHandlers, SessionHandlers, PreferencesHandlers, SystemHandlers]),
  Layer.provide([AuthenticationLive, RequestValidationLive])
)

/** The reference page is served from the bundled Scalar script, without its web fonts: no request leaves for a CDN. */
const DocsRoutes = HttpApiScalar.layer(Api, { path: "/docs", scalar: { withDefaultFonts: false } })

export const HttpApp = Layer.mergeAll(
  ApiRoutes,
  DocsRoutes,
  Layer.unwrap(Effect.map(HttpSettings, edgeMiddleware))
)
