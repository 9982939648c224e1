// The back-office's operations (schemas and endpoints only): a service's page and its suspension with a statement of
// reasons, failed orders, a customer's payments and a refund of a charge, a customer's e-mails and their resending.
// Support may read, suspend, unsuspend and resend; a refund needs an admin (RequiredRole).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { RefundReason } from "../../domain/backoffice/refunds.ts"
import { HoldGround } from "../../domain/billing/ServiceHold.ts"
import { RequiredRole, StaffAuthentication } from "./AdminApi.ts"
import { Conflict, errorBody, NotFound, ServiceUnavailable, Unprocessable } from "./ApiErrors.ts"
import { Line, Lines, MissingAnswer, PathId } from "./inputs.ts"
import { FindingsView, NoticeView, RefundView, ServiceHoldView, StaffOrderView, StaffPaymentView, StaffServicePage } from "./views.ts"

const NonBlank = (max: number) => Lines(max).check(Schema.isTrimmed(), Schema.isMinLength(3))

export const SuspendRequest = Schema.Struct({
  /** The facts and circumstances, for the customer's statement of reasons (DSA art. 17(3)(b)). */
  facts: NonBlank(2000),
  ground: HoldGround
})

export const UnsuspendRequest = Schema.Struct({ reason: NonBlank(500) })

export const RefundRequestBody = Schema.Struct({
  amountCents: Schema.Int.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(100_000_000)),
  /** Made by the client once per refund it means (a double click sends the same key): the same key, the same refund. */
  idempotencyKey: Line(100).check(Schema.isMinLength(8)),
  reason: RefundReason
})

/** What a path id that cannot name anything answers: the missing thing it would name (README's codes). */
const missing = {
  service: new NotFound({ error: errorBody("SERVICE_NOT_FOUND", "No such service.") }),
  order: new NotFound({ error: errorBody("ORDER_NOT_FOUND", "No such order.") }),
  customer: new NotFound({ error: errorBody("CUSTOMER_NOT_FOUND", "No such customer.") }),
  charge: new NotFound({ error: errorBody("CHARGE_NOT_FOUND", "No such charge.") })
}

export class AdminServicesApi extends HttpApiGroup.make("adminServices")
  .add(
    HttpApiEndpoint.get("get", "/services/:id", { params: { id: PathId }, success: StaffServicePage, error: NotFound }),
    HttpApiEndpoint.post("suspend", "/services/:id/suspend", {
      params: { id: PathId },
      payload: SuspendRequest,
      success: ServiceHoldView,
      error: [NotFound, Conflict, ServiceUnavailable]
    }),
    HttpApiEndpoint.post("unsuspend", "/services/:id/unsuspend", {
      params: { id: PathId },
      payload: UnsuspendRequest,
      success: ServiceHoldView,
      error: [NotFound, Conflict, ServiceUnavailable]
    }),
    HttpApiEndpoint.post("terminate", "/services/:id/terminate", {
      params: { id: PathId },
      payload: UnsuspendRequest,
      success: HttpApiSchema.NoContent,
      error: [NotFound, Conflict, ServiceUnavailable]
    }).annotate(RequiredRole, "admin"),
    HttpApiEndpoint.post("reconcile", "/services/:id/reconcile", { params: { id: PathId }, success: FindingsView, error: NotFound }),
    HttpApiEndpoint.post("resumeProvisioning", "/services/:id/resume-provisioning", {
      params: { id: PathId },
      success: StaffOrderView.pipe(HttpApiSchema.status(202)),
      error: [NotFound, Conflict]
    }).annotate(RequiredRole, "admin")
  )
  .middleware(StaffAuthentication)
  .annotate(MissingAnswer, missing.service)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Back-office: services", description: "A service's records and its suspension by an operator (staff only)" }))
{}

export class AdminMoneyApi extends HttpApiGroup.make("adminMoney")
  .add(
    HttpApiEndpoint.get("failedOrders", "/orders/failed", { success: Schema.Struct({ orders: Schema.Array(StaffOrderView) }) }),
    HttpApiEndpoint.post("retryOrder", "/orders/:id/retry", {
      params: { id: PathId },
      success: StaffOrderView.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Conflict, ServiceUnavailable, Unprocessable]
    }).annotate(RequiredRole, "admin").annotate(MissingAnswer, missing.order).annotateMerge(OpenApi.annotations({
      description: "Retries a failed order (refunded when it failed) as a new order of the same customer, plan and options, " +
        "awaiting the customer's payment on its page; the customer is e-mailed the link. At most one retry per failed " +
        "order: 409 ORDER_NOT_RETRYABLE (not failed), ORDER_ALREADY_RETRIED (details.retriedAs), PLAN_OFF_SALE, PLAN_SOLD_OUT."
    })),
    HttpApiEndpoint.get("payments", "/customers/:id/payments", {
      params: { id: PathId },
      success: Schema.Struct({ payments: Schema.Array(StaffPaymentView) }),
      error: NotFound
    }).annotate(MissingAnswer, missing.customer),
    HttpApiEndpoint.post("refund", "/charges/:id/refunds", {
      params: { id: PathId },
      payload: RefundRequestBody,
      success: RefundView.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Conflict, ServiceUnavailable]
    }).annotate(RequiredRole, "admin").annotate(MissingAnswer, missing.charge),
    HttpApiEndpoint.get("notices", "/customers/:id/notices", {
      params: { id: PathId },
      success: Schema.Struct({ notices: Schema.Array(NoticeView) }),
      error: NotFound
    }).annotate(MissingAnswer, missing.customer),
    HttpApiEndpoint.post("resendNotice", "/notices/resend", {
      payload: Schema.Struct({ key: Line(300).check(Schema.isMinLength(1)) }),
      success: HttpApiSchema.NoContent,
      error: [NotFound, ServiceUnavailable]
    })
  )
  .middleware(StaffAuthentication)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Back-office: orders and money", description: "Failed orders, payments, refunds and customers' e-mails (staff only; refunds: admin)" }))
{}
