// The contract of what a signed-in customer buys and runs: orders, subscriptions, VPSes and their snapshots.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./AccountsApi.ts"
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  PaymentRequired,
  ServiceUnavailable,
  TooManyRequests,
  Unprocessable
} from "./ApiErrors.ts"
import { missingAnswers } from "./errorMapping.ts"
import { Line, Lines, MissingAnswer, noControlInside, PageQuery, PathId } from "./inputs.ts"
import { OrderView, PaymentAnswerView, RenewalView, SnapshotView, SubscriptionView, VpsView, WithdrawalView } from "./views.ts"

const Id = PathId

const upstream = [ServiceUnavailable, Conflict, NotFound, TooManyRequests] as const

/** Proxmox's own default is 60 s; past 300 s a browser or a proxy would give up on the request first. */
export const SHUTDOWN_TIMEOUT = { default: 60, minimum: 5, maximum: 300 } as const

const ShutdownRequest = Schema.Struct({
  timeoutSeconds: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: SHUTDOWN_TIMEOUT.minimum, maximum: SHUTDOWN_TIMEOUT.maximum }))
  )
})

export class OrdersApi extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.post("create", "/", {
      payload: Schema.Struct({
        planId: Line(64),
        // Each kind of plan has its own options, checked by the domain; their text follows the same rule as ours.
        options: Schema.Record(Schema.String, Schema.Unknown).check(noControlInside),
        /**
         * The consumer expressly asks for the service to start before the end of the 14-day withdrawal period (our
         * services start at once). Required (true) for a personal account: without it 422
         * EXPRESS_START_CONSENT_REQUIRED; ignored for a professional one, which has no withdrawal right.
         */
        expressStartConsent: Schema.optionalKey(Schema.Boolean)
      }),
      success: Schema.Struct({ order: OrderView }).pipe(HttpApiSchema.status(201)),
      error: [Unprocessable, PaymentRequired, Conflict, ServiceUnavailable]
    }),
    HttpApiEndpoint.get("get", "/:id", { params: { id: Id }, success: OrderView, error: NotFound })
  )
  .middleware(Authentication)
  .annotate(MissingAnswer, missingAnswers.order)
  .prefix("/api/orders")
  .annotateMerge(OpenApi.annotations({ title: "Orders", description: "Buy a plan; follow its provisioning" }))
{}

export class SubscriptionsApi extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: PageQuery,
      success: Schema.Struct({
        subscriptions: Schema.Array(SubscriptionView),
        /** Pass as `after` for the next page; absent on the last one. */
        next: Schema.optionalKey(Schema.String)
      })
    }).annotateMerge(OpenApi.annotations({
      description: "The customer's subscriptions, oldest first, 100 a page unless `limit` says fewer; `next` is the cursor of the following page (pass it as `after`)"
    })),
    HttpApiEndpoint.get("renewals", "/renewals", {
      success: Schema.Struct({ renewals: Schema.Array(RenewalView) })
    }).annotateMerge(OpenApi.annotations({
      description: "Each subscription's renewal: the next charge (date and amount), a declined one and its next try, " +
        "a payment waiting for the customer's approval, a lapse, a cancellation"
    })),
    HttpApiEndpoint.post("pay", "/:id/pay", {
      params: { id: Id },
      success: PaymentAnswerView,
      error: [NotFound, Conflict, PaymentRequired, ServiceUnavailable]
    }).annotateMerge(OpenApi.annotations({
      description: "Pays the next period now (a lapsed service comes back): with the saved card when it goes through " +
        "(`paid`), else the URL of the payment provider's page to pay on (`pay_on_page`)"
    })),
    HttpApiEndpoint.post("renew", "/:id/renew", {
      params: { id: Id },
      success: Schema.Struct({ subscription: SubscriptionView }),
      error: [NotFound, Conflict, PaymentRequired, ServiceUnavailable]
    }),
    HttpApiEndpoint.post("cancel", "/:id/cancel", {
      params: { id: Id },
      success: Schema.Struct({ subscription: SubscriptionView }),
      error: [NotFound, Conflict]
    }).annotateMerge(OpenApi.annotations({
      description: "The cancellation function (\"Cancel your contract\"): the subscription ends at the end of its paid " +
        "period and is not charged again; confirmed by e-mail. A second call changes nothing."
    })),
    HttpApiEndpoint.post("withdraw", "/:id/withdraw", {
      params: { id: Id },
      success: WithdrawalView,
      error: [NotFound, Conflict, Forbidden]
    }).annotateMerge(OpenApi.annotations({
      description: "The withdrawal function (\"Withdraw from this contract here\"), for a consumer within 14 days of " +
        "the contract's conclusion (its first payment; Code de la consommation L221-18): the service ends now, the " +
        "price paid is refunded minus the part already provided, pro rata to the second (`refundCents`), with a " +
        "credit note, and the declaration is acknowledged by e-mail. 403 WITHDRAWAL_NOT_AVAILABLE for a professional " +
        "account, 409 WITHDRAWAL_PERIOD_OVER after the period, 409 ALREADY_WITHDRAWN, 409 SUBSCRIPTION_ENDED, 409 " +
        "SERVICE_NOT_READY while the service is still being built (minutes after the payment)."
    }))
  )
  .middleware(Authentication)
  .annotate(MissingAnswer, missingAnswers.subscription)
  .prefix("/api/subscriptions")
  .annotateMerge(OpenApi.annotations({ title: "Subscriptions", description: "Monthly periods: renew, cancel, withdraw" }))
{}

export class VpsApi extends HttpApiGroup.make("vps")
  .add(
    HttpApiEndpoint.get("list", "/", { success: Schema.Struct({ vps: Schema.Array(VpsView) }) }),
    HttpApiEndpoint.get("get", "/:id", { params: { id: Id }, success: Schema.Struct({ vps: VpsView }), error: NotFound }),
    HttpApiEndpoint.post("start", "/:id/start", { params: { id: Id }, success: Schema.Struct({ vps: VpsView }), error: upstream }),
    HttpApiEndpoint.post("shutdown", "/:id/shutdown", {
      params: { id: Id },
      // The body is optional: an empty POST (read as null) shuts down with the default timeout.
      payload: [ShutdownRequest, Schema.Null],
      success: Schema.Struct({ vps: VpsView }),
      error: upstream
    }).annotate(OpenApi.Description, "Graceful: the guest is asked to power off (ACPI) and given `timeoutSeconds`; a guest still up then is left running (409 SHUTDOWN_TIMED_OUT) — force it with `stop`."),
    HttpApiEndpoint.post("stop", "/:id/stop", { params: { id: Id }, success: Schema.Struct({ vps: VpsView }), error: upstream })
      .annotate(OpenApi.Description, "Hard power-off (the plug pulled): the guest is not asked. Prefer `shutdown`."),
    HttpApiEndpoint.post("reset", "/:id/reset", { params: { id: Id }, success: Schema.Struct({ vps: VpsView }), error: upstream })
      .annotate(OpenApi.Description, "Hard reset (the reset button): the guest is not asked."),
    HttpApiEndpoint.post("resetPassword", "/:id/reset-password", {
      params: { id: Id },
      success: Schema.Struct({ rootPassword: Schema.String, appliesAtNextBoot: Schema.Boolean }),
      error: upstream
    }),
    HttpApiEndpoint.get("snapshots", "/:id/snapshots", {
      params: { id: Id },
      success: Schema.Struct({ snapshots: Schema.Array(SnapshotView) }),
      error: upstream
    }),
    HttpApiEndpoint.post("createSnapshot", "/:id/snapshots", {
      params: { id: Id },
      payload: Schema.Struct({
        name: Line(64),
        description: Schema.optionalKey(Lines(500))
      }),
      success: Schema.Struct({ snapshots: Schema.Array(SnapshotView) }).pipe(HttpApiSchema.status(201)),
      error: [...upstream, Unprocessable, BadRequest]
    }),
    HttpApiEndpoint.delete("deleteSnapshot", "/:id/snapshots/:name", {
      // Any name: one that cannot be a snapshot's is answered by the domain as a missing snapshot, after the VPS.
      params: { id: Id, name: Schema.String },
      success: HttpApiSchema.NoContent,
      error: upstream
    })
  )
  .middleware(Authentication)
  .annotate(MissingAnswer, missingAnswers.vps)
  .prefix("/api/vps")
  .annotateMerge(OpenApi.annotations({
    title: "VPS",
    description: "Your virtual servers. The serial console is a WebSocket at GET /api/vps/:id/console."
  }))
{}
