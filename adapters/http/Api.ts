// The whole HTTP API definition: every group, the shared request validation, and the OpenAPI metadata.
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { AuthApi, PreferencesApi, RequestValidation, SessionApi } from "./AccountsApi.ts"
import { AdminAuditApi, AdminCatalogApi, AdminDashboardApi, AdminCustomersApi, SecurityEventsApi } from "./AdminApi.ts"
import { AdminMoneyApi, AdminServicesApi } from "./AdminOperationsApi.ts"
import { ServiceUnavailable } from "./ApiErrors.ts"
import { CatalogApi } from "./CatalogApi.ts"
import { GameClientApi, GameServersApi } from "./GameApi.ts"
import { BillingProfileApi, InvoicesApi } from "./InvoicingApi.ts"
import { LegalApi } from "./LegalApi.ts"
import { PaymentHistoryApi, PaymentMethodApi, PaymentsApi } from "./PaymentsApi.ts"
import { OrdersApi, SubscriptionsApi, VpsApi } from "./ServicesApi.ts"

export class SystemApi extends HttpApiGroup.make("system", { topLevel: true })
  .add(
    HttpApiEndpoint.get("health", "/healthz", { success: Schema.Struct({ status: Schema.Literal("ok") }) }),
    HttpApiEndpoint.get("ready", "/readyz", {
      success: Schema.Struct({ status: Schema.Literal("ready") }),
      error: ServiceUnavailable
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "System", description: "Liveness (process) and readiness (database)" }))
{}

/**
 * Every route needs the database, so each may answer 503 DATABASE_UNREACHABLE with Retry-After (the domain's
 * DatabaseUnavailable, mapped in errorMapping.ts): declared once here, for the contract and the encoder.
 */
export class DatabaseOutage extends HttpApiMiddleware.Service<DatabaseOutage>()("zh/http/DatabaseOutage", {
  error: ServiceUnavailable
}) {}

export class Api extends HttpApi.make("zh")
  .add(AuthApi)
  .add(SessionApi)
  .add(PreferencesApi)
  .add(CatalogApi)
  .add(LegalApi)
  .add(OrdersApi)
  .add(SubscriptionsApi)
  .add(PaymentMethodApi)
  .add(PaymentHistoryApi)
  .add(PaymentsApi)
  .add(BillingProfileApi)
  .add(InvoicesApi)
  .add(VpsApi)
  .add(GameServersApi)
  .add(GameClientApi)
  .add(SecurityEventsApi)
  .add(AdminAuditApi)
  .add(AdminCustomersApi)
  .add(AdminCatalogApi)
  .add(AdminDashboardApi)
  .add(AdminServicesApi)
  .add(AdminMoneyApi)
  .add(SystemApi)
  .middleware(RequestValidation)
  .middleware(DatabaseOutage)
  .annotateMerge(OpenApi.annotations({
    title: "ZH hosting platform API",
    version: "0.1.0",
    description: "Errors: { \"error\": { \"code\": \"SNAKE_CASE\", \"message\": \"…\" } }"
  }))
{}
