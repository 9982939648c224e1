// The back-office's contract (schemas and endpoints only): everything under /api/admin, for staff. Each endpoint
// says which role it needs (RequiredRole: support when it says nothing); the edge refuses anyone else first.
import { Context, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "effect/http-api"
import type { StaffRole } from "../../domain/account/Role.ts"
import { Authentication, type CurrentSession, SessionCookie } from "./AccountsApi.ts"
import { Forbidden, NotFound, ServiceUnavailable, Unauthorized } from "./ApiErrors.ts"
import { errorBody } from "./ApiErrors.ts"
import { Line, MissingAnswer, PathId } from "./inputs.ts"
import { AdminCatalogView, AuditPage, DashboardView, InvoiceView, ViewAsView, PlanSaleView, SecurityEventsPage, StaffCustomerPage, StaffCustomerView, StaffOrderPage } from "./views.ts"

/** The least role an endpoint needs (support reads everything; admin does everything). */
export class RequiredRole extends Context.Service<RequiredRole, StaffRole>()("zh/http/RequiredRole") {}

/** The staff guard: a signed-in user whose role may call the endpoint (401 otherwise, 403 for anyone else). */
export class StaffAuthentication extends HttpApiMiddleware.Service<StaffAuthentication, { provides: CurrentSession }>()(
  "zh/http/StaffAuthentication",
  { error: [Unauthorized, Forbidden, ServiceUnavailable], security: { cookie: SessionCookie } }
) {}

/** A keyset cursor: the id of the last event of the previous page. */
export const Cursor = Schema.String.check(Schema.isPattern(/^[1-9][0-9]{0,17}$/u, { message: "must be a cursor given by a previous page" }))

export const PageSize = Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 200 }))

export const AuditFilter = Schema.Struct({
  /** Events of this customer's account (subject), and … */
  user: Schema.optionalKey(Schema.String.check(Schema.isGUID())),
  /** … events this user did (actor). */
  actor: Schema.optionalKey(Schema.String.check(Schema.isGUID())),
  /** One action name (`auth.sign_in`, `vps.power`, …). */
  action: Schema.optionalKey(Line(64)),
  before: Schema.optionalKey(Cursor),
  limit: Schema.optionalKey(PageSize)
})

const customerMissing = new NotFound({ error: errorBody("CUSTOMER_NOT_FOUND", "No such customer.") })

export class AdminAuditApi extends HttpApiGroup.make("adminAudit")
  .add(HttpApiEndpoint.get("list", "/audit", { query: AuditFilter, success: AuditPage }))
  .middleware(StaffAuthentication)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Back-office: audit log", description: "Every operator action and the customers' significant ones (staff only)" }))
{}

export class AdminCustomersApi extends HttpApiGroup.make("adminCustomers")
  .add(
    HttpApiEndpoint.get("search", "/customers", {
      query: Schema.Struct({ q: Line(254).check(Schema.isTrimmed(), Schema.isMinLength(2)) }),
      success: Schema.Struct({ customers: Schema.Array(StaffCustomerView) })
    }),
    HttpApiEndpoint.get("get", "/customers/:id", { params: { id: PathId }, success: StaffCustomerPage, error: NotFound }),
    HttpApiEndpoint.get("invoices", "/customers/:id/invoices", {
      params: { id: PathId },
      query: {
        after: Schema.optionalKey(Line(200)),
        limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 })))
      },
      success: Schema.Struct({ invoices: Schema.Array(InvoiceView), next: Schema.optionalKey(Schema.String) }),
      error: NotFound
    }),
    HttpApiEndpoint.get("orders", "/customers/:id/orders", {
      params: { id: PathId },
      query: {
        after: Schema.optionalKey(Line(200)),
        limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 })))
      },
      success: StaffOrderPage,
      error: NotFound
    }),
    HttpApiEndpoint.get("viewAs", "/customers/:id/view-as", { params: { id: PathId }, success: ViewAsView, error: NotFound })
      .annotateMerge(OpenApi.annotations({
        summary: "View as customer",
        description: "What the customer's panel shows them (subscriptions, renewals, VPS, game servers, latest invoices), " +
          "read-only: a GET of its own, never a session of the customer's. Audited (`admin.view_as`). 404 CUSTOMER_NOT_FOUND."
      })),
    HttpApiEndpoint.post("endSessions", "/customers/:id/logout-all", {
      params: { id: PathId },
      success: HttpApiSchema.NoContent,
      error: NotFound
    }).annotate(RequiredRole, "admin")
  )
  .middleware(StaffAuthentication)
  .annotate(MissingAnswer, customerMissing)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Back-office: customers", description: "Search and read customers (staff only)" }))
{}

export class AdminDashboardApi extends HttpApiGroup.make("adminDashboard")
  .add(HttpApiEndpoint.get("get", "/dashboard", { success: DashboardView }).annotateMerge(OpenApi.annotations({
    summary: "The dashboard's figures",
    description: "MRR, services by kind and plan, today's orders (the French day), failed payments awaiting a retry, open " +
      "refunds, IP pool and panel allocation fill, node capacity; each with `alert` past its threshold (DASHBOARD_* settings)."
  })))
  .middleware(StaffAuthentication)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Back-office: dashboard", description: "The health of the business and the platform (staff only)" }))
{}

const planMissing = new NotFound({ error: errorBody("PLAN_NOT_FOUND", "No such plan.") })

export class AdminCatalogApi extends HttpApiGroup.make("adminCatalog")
  .add(
    HttpApiEndpoint.get("get", "/catalog", { success: AdminCatalogView }),
    HttpApiEndpoint.post("setPlanSale", "/catalog/plans/:id/sale", {
      params: { id: Line(64) },
      payload: Schema.Struct({ onSale: Schema.Boolean }),
      success: PlanSaleView,
      error: NotFound
    }).annotate(RequiredRole, "admin").annotateMerge(OpenApi.annotations({
      summary: "Put a plan on or off sale",
      description: "Off sale, the plan leaves GET /api/plans and an order for it is refused with 409 PLAN_OFF_SALE; " +
        "subscriptions on it go on and renew. Audited (`catalog.plan_sale_changed`, before/after). 404 PLAN_NOT_FOUND."
    }))
  )
  .middleware(StaffAuthentication)
  .annotate(MissingAnswer, planMissing)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Back-office: catalog", description: "Plans, templates, pools, clusters and panels as the catalog file made them (staff only)" }))
{}

/** The customer's own trail: sign-ins, failed ones, password resets, consoles opened, operators' changes. */
export class SecurityEventsApi extends HttpApiGroup.make("securityEvents")
  .add(
    HttpApiEndpoint.get("list", "/security-events", {
      query: Schema.Struct({ before: Schema.optionalKey(Cursor), limit: Schema.optionalKey(PageSize) }),
      success: SecurityEventsPage
    })
  )
  .middleware(Authentication)
  .prefix("/api/account")
  .annotateMerge(OpenApi.annotations({ title: "Security events", description: "The signed-in customer's own account events" }))
{}
