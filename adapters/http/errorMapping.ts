// The one table where failures meet HTTP: each domain error — and each status the edge answers on its own — becomes a
// status, a stable code, a message and, for a throttle, when to come back (Retry-After). The HttpApi routes, the raw
// routes (relay, consoles) and the WebSocket refusals all answer from here, in the envelope
// `{ "error": { "code", "message", "details"? } }`.
import { Effect } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { STATUS_CODES } from "node:http"
import type * as AccountErrors from "../../domain/account/AccountErrors.ts"
import type { PlanNotFound } from "../../domain/backoffice/catalog.ts"
import type { CustomerNotFound } from "../../domain/backoffice/customers.ts"
import type { NoticeNotFound, NoticeNotResent } from "../../domain/backoffice/notices.ts"
import type { ChargeNotFound, RefundExceedsCharge, RefundKeyReused, RefundPending } from "../../domain/backoffice/refunds.ts"
import type { ServiceGone, ServiceNotFound, ServiceNotHeld, ServiceNotOurs } from "../../domain/backoffice/serviceHolds.ts"
import type { OrderAlreadyRetried, OrderNotRetryable } from "../../domain/backoffice/orderRetry.ts"
import type { OrderNotResumable } from "../../domain/backoffice/servicePage.ts"
import type { TooManyConsoles } from "../../domain/consoles/ConsoleAdmission.ts"
import * as BillingErrors from "../../domain/billing/BillingErrors.ts"
import * as GameErrors from "../../domain/game/GameErrors.ts"
import type * as InvoicingErrors from "../../domain/billing/invoicing/InvoicingErrors.ts"
import { InvoiceNotFound } from "../../domain/billing/invoicing/InvoicingErrors.ts"
import * as VpsActions from "../../domain/vps/VpsActions.ts"
import type * as GamePanel from "../../ports/GamePanel.ts"
import type { RegistryUnavailable } from "../../ports/BusinessRegistry.ts"
import type { DatabaseUnavailable } from "../../ports/DatabaseUnavailable.ts"
import type {
  NotificationSignatureInvalid,
  PaymentAuthenticationRequired,
  PaymentDeclined,
  PaymentsNotConfigured,
  PaymentUnavailable
} from "../../ports/PaymentGateway.ts"
import type * as Virtualization from "../../ports/Virtualization.ts"
import {
  type ApiError,
  BadRequest,
  Conflict,
  errorBody,
  Forbidden,
  NotFound,
  PaymentRequired,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  Unprocessable
} from "./ApiErrors.ts"
import type { BudgetExceeded } from "./customerBudget.ts"

/** What a client receives for a failure. */
export interface Answer {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly details?: unknown
  /** RFC 9110 §10.2.3: sent as Retry-After. */
  readonly retryAfterSeconds?: number
}

const answer = (status: number, code: string, message: string, extra: Pick<Answer, "details" | "retryAfterSeconds"> = {}): Answer => ({
  status,
  code,
  message,
  ...extra
})

// --- statuses the edge answers on its own ----------------------------------------------------------------------

const STATUS_DEFAULTS: Record<number, readonly [code: string, message: string]> = {
  400: ["BAD_REQUEST", "The request is not valid."],
  404: ["NOT_FOUND", "Nothing is here."],
  405: ["METHOD_NOT_ALLOWED", "This method is not allowed here."],
  409: ["CONFLICT", "This conflicts with a change made at the same time; reload and try again."],
  413: ["PAYLOAD_TOO_LARGE", "The request body is too large."],
  415: ["UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json."],
  500: ["INTERNAL_ERROR", "Something went wrong on our side; it has been logged."],
  503: ["SERVICE_UNAVAILABLE", "The service is unavailable; please try again in a few seconds."]
}

/** `Upgrade Required` → `UPGRADE_REQUIRED`: any other status still gets a stable code. */
const codeOfStatus = (status: number) => (STATUS_CODES[status] ?? "Error").toUpperCase().replace(/[^A-Z0-9]+/g, "_")

/** A status's own answer (the router's 404, the body limit's 413 …), with an optional code and message of the route's. */
export const statusAnswer = (status: number, code?: string, message?: string): Answer => {
  const [defaultCode, defaultMessage] = STATUS_DEFAULTS[status] ?? [codeOfStatus(status), STATUS_CODES[status] ?? "The request failed."]
  return answer(status, code ?? defaultCode, message ?? defaultMessage)
}

/** How long a client should wait before trying again while the database is away. */
const DATABASE_RETRY_AFTER_SECONDS = 5

export const databaseUnreachable = answer(503, "DATABASE_UNREACHABLE", "The database does not answer; please try again in a few seconds.", {
  retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS
})

// --- domain errors ---------------------------------------------------------------------------------------------

export type DomainError =
  | AccountErrors.EmailAlreadyRegistered
  | AccountErrors.InvalidEmail
  | AccountErrors.PasswordPolicyViolation
  | AccountErrors.SiretRequired
  | AccountErrors.InvalidSiret
  | AccountErrors.SiretUnknown
  | AccountErrors.SiretClosed
  | AccountErrors.InvalidCredentials
  | AccountErrors.LoginThrottled
  | AccountErrors.ResetThrottled
  | AccountErrors.Unauthenticated
  | AccountErrors.NotPermitted
  | CustomerNotFound
  | PlanNotFound
  | ServiceNotFound
  | ServiceGone
  | ServiceNotHeld
  | ServiceNotOurs
  | OrderNotResumable
  | OrderNotRetryable
  | OrderAlreadyRetried
  | BillingErrors.ServiceUpstreamUnavailable
  | ChargeNotFound
  | RefundExceedsCharge
  | RefundKeyReused
  | RefundPending
  | NoticeNotFound
  | NoticeNotResent
  | AccountErrors.ResetTokenInvalid
  | AccountErrors.ResetTokenExpired
  | AccountErrors.ResetTokenUsed
  | RegistryUnavailable
  | BillingErrors.PlanUnavailable
  | BillingErrors.PlanOffSale
  | BillingErrors.ProductUnavailable
  | BillingErrors.InvalidOrderOption
  | BillingErrors.SoldOut
  | BillingErrors.OrderNotFound
  | BillingErrors.SubscriptionNotFound
  | BillingErrors.SubscriptionEnded
  | BillingErrors.PaymentMethodNotFound
  | BillingErrors.ExpressStartConsentRequired
  | BillingErrors.WithdrawalNotAvailable
  | BillingErrors.WithdrawalPeriodOver
  | BillingErrors.AlreadyWithdrawn
  | BillingErrors.ServiceNotReady
  | InvoicingErrors.InvalidBillingProfile
  | InvoicingErrors.InvalidVatNumber
  | InvoicingErrors.BillingProfileRequired
  | InvoicingErrors.InvoiceNotFound
  | PaymentDeclined
  | PaymentAuthenticationRequired
  | NotificationSignatureInvalid
  | PaymentUnavailable
  | PaymentsNotConfigured
  | VpsActions.VpsNotFound
  | VpsActions.VpsUnavailable
  | VpsActions.SnapshotLimitReached
  | VpsActions.InvalidSnapshotName
  | VpsActions.SnapshotNotFound
  | VpsActions.SnapshotExists
  | VpsActions.SnapshotBusy
  | Virtualization.VirtualizationUnavailable
  | Virtualization.TaskFailed
  | Virtualization.ClusterUnknown
  | Virtualization.VmNotFound
  | Virtualization.ShutdownTimedOut
  | GameErrors.GameServerNotFound
  | GameErrors.GameServerUnavailable
  | GameErrors.ConsoleTokenInvalid
  | GamePanel.GamePanelUnavailable
  | GamePanel.GamePanelThrottled
  | GamePanel.PanelUnknown
  | GamePanel.PanelValidationFailed
  | GamePanel.ServerStateConflict
  | GamePanel.PanelResourceNotFound
  | GamePanel.PanelRefusal
  | BudgetExceeded
  | TooManyConsoles
  | DatabaseUnavailable

type Table = { readonly [K in DomainError["_tag"]]: (e: Extract<DomainError, { _tag: K }>) => Answer }

/** The domain's own words, under a stable code. */
const own = (status: number, code: string) => (e: { readonly message: string }) => answer(status, code, e.message)

const panelUnavailable = answer(503, "GAME_PANEL_UNAVAILABLE", "The game panel did not complete the operation; please try again shortly.")
const upstreamUnavailable = answer(503, "UPSTREAM_UNAVAILABLE", "The virtualization platform did not complete the operation; please try again shortly.")

/** The panel's refusals we can name (its DisplayException family), in our words; anything else is generic. */
const table = {
  EmailAlreadyRegistered: own(409, "EMAIL_TAKEN"),
  InvalidEmail: own(422, "INVALID_EMAIL"),
  PasswordPolicyViolation: (e) => answer(422, `PASSWORD_${e.problem}`, e.message),
  SiretRequired: own(422, "SIRET_REQUIRED"),
  InvalidSiret: (e) => answer(422, e.problem === "SIRET_FORMAT" ? "SIRET_FORMAT" : "SIRET_CHECKSUM", e.message),
  SiretUnknown: own(422, "SIRET_UNKNOWN"),
  SiretClosed: own(422, "SIRET_CLOSED"),
  RegistryUnavailable: (e) => answer(503, e.reason === "THROTTLED" ? "REGISTRY_THROTTLED" : "REGISTRY_UNAVAILABLE", e.message),
  InvalidCredentials: own(401, "INVALID_CREDENTIALS"),
  LoginThrottled: (e) => answer(429, "LOGIN_THROTTLED", e.message, { retryAfterSeconds: e.retryAfterSeconds }),
  ResetThrottled: (e) => answer(429, "RESET_THROTTLED", e.message, { retryAfterSeconds: e.retryAfterSeconds }),
  Unauthenticated: (e) => answer(401, e.reason === "EXPIRED" ? "SESSION_EXPIRED" : "UNAUTHENTICATED", e.message),
  // One answer for every refused role, whatever was asked: it tells nothing of what exists behind it.
  NotPermitted: own(403, "FORBIDDEN"),
  CustomerNotFound: own(404, "CUSTOMER_NOT_FOUND"),
  PlanNotFound: own(404, "PLAN_NOT_FOUND"),
  ServiceNotFound: own(404, "SERVICE_NOT_FOUND"),
  ServiceGone: own(409, "SERVICE_GONE"),
  ServiceNotHeld: own(409, "SERVICE_NOT_HELD"),
  ServiceNotOurs: own(409, "SERVICE_NOT_OURS"),
  OrderNotResumable: own(409, "ORDER_NOT_RESUMABLE"),
  OrderNotRetryable: own(409, "ORDER_NOT_RETRYABLE"),
  OrderAlreadyRetried: (e) => answer(409, "ORDER_ALREADY_RETRIED", e.message, { details: { retriedAs: e.retriedAs } }),
  ServiceUpstreamUnavailable: own(503, "SERVICE_UPSTREAM_UNAVAILABLE"),
  ChargeNotFound: own(404, "CHARGE_NOT_FOUND"),
  RefundExceedsCharge: (e) => answer(409, "REFUND_EXCEEDS_CHARGE", e.message, { details: { refundableCents: e.refundableCents } }),
  RefundKeyReused: own(409, "IDEMPOTENCY_KEY_REUSED"),
  RefundPending: own(503, "REFUND_PENDING"),
  NoticeNotFound: own(404, "NOTICE_NOT_FOUND"),
  NoticeNotResent: own(503, "MAIL_UNAVAILABLE"),
  ResetTokenInvalid: own(400, "RESET_TOKEN_INVALID"),
  ResetTokenExpired: own(400, "RESET_TOKEN_EXPIRED"),
  ResetTokenUsed: own(400, "RESET_TOKEN_USED"),
  PlanUnavailable: own(422, "PLAN_UNAVAILABLE"),
  PlanOffSale: own(409, "PLAN_OFF_SALE"),
  InvalidOrderOption: own(422, "INVALID_ORDER_OPTION"),
  SoldOut: own(409, "PLAN_SOLD_OUT"),
  OrderNotFound: own(404, "ORDER_NOT_FOUND"),
  SubscriptionNotFound: own(404, "SUBSCRIPTION_NOT_FOUND"),
  SubscriptionEnded: own(409, "SUBSCRIPTION_ENDED"),
  PaymentMethodNotFound: own(404, "PAYMENT_METHOD_NOT_FOUND"),
  ExpressStartConsentRequired: own(422, "EXPRESS_START_CONSENT_REQUIRED"),
  WithdrawalNotAvailable: own(403, "WITHDRAWAL_NOT_AVAILABLE"),
  WithdrawalPeriodOver: own(409, "WITHDRAWAL_PERIOD_OVER"),
  AlreadyWithdrawn: own(409, "ALREADY_WITHDRAWN"),
  ServiceNotReady: own(409, "SERVICE_NOT_READY"),
  InvalidBillingProfile: (e) => answer(422, "BILLING_PROFILE_INVALID", e.message, { details: { field: e.field } }),
  InvalidVatNumber: own(422, "VAT_NUMBER_INVALID"),
  BillingProfileRequired: own(422, "BILLING_PROFILE_REQUIRED"),
  InvoiceNotFound: own(404, "INVOICE_NOT_FOUND"),
  ProductUnavailable: (e) =>
    answer(e.busy ? 429 : 503, e.code, e.message, e.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: e.retryAfterSeconds }),
  PaymentDeclined: own(402, "PAYMENT_DECLINED"),
  PaymentAuthenticationRequired: own(402, "PAYMENT_AUTHENTICATION_REQUIRED"),
  NotificationSignatureInvalid: own(400, "WEBHOOK_SIGNATURE_INVALID"),
  PaymentUnavailable: own(503, "PAYMENT_UNAVAILABLE"),
  PaymentsNotConfigured: own(503, "PAYMENTS_NOT_CONFIGURED"),
  VpsNotFound: own(404, "VPS_NOT_FOUND"),
  VpsUnavailable: (e) =>
    answer(409, e.status === "suspended" ? "VPS_SUSPENDED" : e.status === "destroyed" ? "VPS_DESTROYED" : "VPS_NOT_RUNNING", e.message),
  SnapshotLimitReached: own(409, "SNAPSHOT_LIMIT_REACHED"),
  InvalidSnapshotName: own(422, "INVALID_SNAPSHOT_NAME"),
  SnapshotNotFound: own(404, "SNAPSHOT_NOT_FOUND"),
  SnapshotExists: own(409, "SNAPSHOT_EXISTS"),
  SnapshotBusy: own(409, "SNAPSHOT_BUSY"),
  // Upstream details (hosts, nodes, task logs) stay in our logs; the customer gets a generic, stable answer.
  VirtualizationUnavailable: () => upstreamUnavailable,
  TaskFailed: () => upstreamUnavailable,
  ClusterUnknown: () => upstreamUnavailable,
  VmNotFound: () => upstreamUnavailable,
  ShutdownTimedOut: (e) =>
    answer(409, "SHUTDOWN_TIMED_OUT", `The VPS did not shut down within ${e.timeoutSeconds} seconds and is still running; power it off to force it.`),
  GameServerNotFound: own(404, "GAME_SERVER_NOT_FOUND"),
  GameServerUnavailable: (e) => answer(409, e.status === "suspended" ? "GAME_SERVER_SUSPENDED" : "GAME_SERVER_DELETED", e.message),
  ConsoleTokenInvalid: own(401, "CONSOLE_TOKEN_INVALID"),
  // The panel's own words (hosts, nodes, daemon messages) stay in our logs; the customer gets ours.
  GamePanelUnavailable: () => panelUnavailable,
  PanelUnknown: () => panelUnavailable,
  GamePanelThrottled: (e) =>
    answer(429, "GAME_PANEL_BUSY", "The game panel is busy; please try again in a moment.", { retryAfterSeconds: e.retryAfterSeconds }),
  PanelValidationFailed: (e) =>
    answer(422, "INVALID_REQUEST", "The game panel refused some of the values sent.", {
      details: e.fields.map((f) => ({ field: f.field, rule: f.rule }))
    }),
  ServerStateConflict: () =>
    answer(409, "GAME_SERVER_BUSY", "The game server cannot do this in its current state (installing, restoring or suspended)."),
  PanelResourceNotFound: () => answer(404, "NOT_FOUND", "No such file, folder or backup."),
  BackupLimitReached: () => answer(400, "BACKUP_LIMIT_REACHED", "This plan's backup limit is reached; delete a backup first."),
  BackupLocked: () => answer(400, "BACKUP_LOCKED", "This backup is locked; unlock it before deleting it."),
  FileTooLarge: () => answer(400, "FILE_TOO_LARGE", "This file is too large to open in the editor; download it instead."),
  FileAlreadyExists: () => answer(400, "FILE_EXISTS", "A file or folder with this name already exists."),
  PanelRefused: () => answer(400, "GAME_PANEL_REFUSED", "The game panel refused this request."),
  BudgetExceeded: (e) => answer(429, "RATE_LIMITED", e.message, { retryAfterSeconds: e.retryAfterSeconds }),
  TooManyConsoles: own(429, "TOO_MANY_CONSOLES"),
  // Every route may meet it (the Api's DatabaseOutage middleware declares it); the driver's words stay in our logs.
  DatabaseUnavailable: () => databaseUnreachable
} satisfies Table

export const answerOf = (e: DomainError): Answer => (table[e._tag] as (e: DomainError) => Answer)(e)

// --- the answer as HTTP ------------------------------------------------------------------------------------------

const bodyOf = (a: Answer) => ({ error: errorBody(a.code, a.message, a.details) })

/** Sets Retry-After when the answer says when to come back; the only place it is set. */
const withRetryAfter = (a: Answer) => (response: HttpServerResponse.HttpServerResponse) =>
  a.retryAfterSeconds === undefined ? response : HttpServerResponse.setHeader(response, "retry-after", String(a.retryAfterSeconds))

/** The answer as a response: for routes outside the HttpApi (relay, consoles, the edge itself). */
export const toResponse = (a: Answer): HttpServerResponse.HttpServerResponse =>
  withRetryAfter(a)(HttpServerResponse.jsonUnsafe(bodyOf(a), { status: a.status }))

/** A status's answer as a response (see `statusAnswer`). */
export const errorResponse = (status: number, code?: string, message?: string) => toResponse(statusAnswer(status, code, message))

/** A domain failure as a response. */
export const refusal = (e: DomainError) => toResponse(answerOf(e))

/** The HttpApi's error class of each status (its schema, in the contract). */
const API_ERRORS: Record<number, new(fields: { readonly error: ReturnType<typeof errorBody> }) => ApiError> = {
  400: BadRequest,
  401: Unauthorized,
  402: PaymentRequired,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  422: Unprocessable,
  429: TooManyRequests,
  503: ServiceUnavailable
}

/** The answer as the HttpApi error its contract declares. */
export const toApiError = (a: Answer): ApiError => {
  const ApiErrorOf = API_ERRORS[a.status]
  if (ApiErrorOf === undefined) throw new Error(`no HttpApi error is declared for status ${a.status}`)
  return new ApiErrorOf(bodyOf(a))
}

/**
 * Maps a use case's domain failures to the HttpApi's errors; a throttle's Retry-After goes on the response made
 * later from the error.
 */
export const mapDomainErrors = <A, E extends DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiError, R | HttpServerRequest.HttpServerRequest> =>
  Effect.catch(effect, (e) => {
    const a = answerOf(e)
    const failure = e._tag === "DatabaseUnavailable" ? Effect.andThen(logOutage(e), Effect.fail(toApiError(a))) : Effect.fail(toApiError(a))
    return a.retryAfterSeconds === undefined
      ? failure
      : Effect.andThen(HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(withRetryAfter(a)(response))), failure)
  })

/** One warning line per request the database could not serve, as the edge logs one that arrives as a defect. */
const logOutage = (e: DatabaseUnavailable) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.logWarning(
      `database unreachable while serving ${request.method} ${request.url.split("?")[0] ?? ""}` +
        (e.cause instanceof Error ? `: ${e.cause.message}` : "")
    ))

/** The answer for an order, subscription, VPS or game server that is not the caller's (or a malformed id of one). */
export const missingAnswers = {
  order: toApiError(answerOf(new BillingErrors.OrderNotFound())),
  subscription: toApiError(answerOf(new BillingErrors.SubscriptionNotFound())),
  vps: toApiError(answerOf(new VpsActions.VpsNotFound())),
  gameServer: toApiError(answerOf(new GameErrors.GameServerNotFound())),
  invoice: toApiError(answerOf(new InvoiceNotFound()))
} as const
