// The one table where domain errors meet HTTP: each becomes a status and a stable code.
import { Effect } from "effect"
import type * as AccountErrors from "../../domain/account/AccountErrors.ts"
import * as BillingErrors from "../../domain/billing/BillingErrors.ts"
import * as GameErrors from "../../domain/game/GameErrors.ts"
import * as VpsActions from "../../domain/vps/VpsActions.ts"
import type * as GamePanel from "../../ports/GamePanel.ts"
import type { RegistryUnavailable } from "../../ports/BusinessRegistry.ts"
import type { PaymentDeclined, PaymentsNotConfigured, PaymentUnavailable } from "../../ports/PaymentGateway.ts"
import type * as Virtualization from "../../ports/Virtualization.ts"
import {
  type ApiError,
  BadRequest,
  Conflict,
  errorBody,
  NotFound,
  PaymentRequired,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  Unprocessable
} from "./ApiErrors.ts"

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
  | AccountErrors.ResetTokenInvalid
  | AccountErrors.ResetTokenExpired
  | AccountErrors.ResetTokenUsed
  | RegistryUnavailable
  | BillingErrors.PlanUnavailable
  | BillingErrors.ProductUnavailable
  | BillingErrors.InvalidOrderOption
  | BillingErrors.OrderNotFound
  | BillingErrors.SubscriptionNotFound
  | BillingErrors.SubscriptionEnded
  | PaymentDeclined
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
  | GamePanel.PanelRejected

type Table = { readonly [K in DomainError["_tag"]]: (e: Extract<DomainError, { _tag: K }>) => ApiError }

const body = (code: string, e: { readonly message: string }) => ({ error: errorBody(code, e.message) })

const table = {
  EmailAlreadyRegistered: (e) => new Conflict(body("EMAIL_TAKEN", e)),
  InvalidEmail: (e) => new Unprocessable(body("INVALID_EMAIL", e)),
  PasswordPolicyViolation: (e) => new Unprocessable(body(`PASSWORD_${e.problem}`, e)),
  SiretRequired: (e) => new Unprocessable(body("SIRET_REQUIRED", e)),
  InvalidSiret: (e) => new Unprocessable(body(e.problem === "SIRET_FORMAT" ? "SIRET_FORMAT" : "SIRET_CHECKSUM", e)),
  SiretUnknown: (e) => new Unprocessable(body("SIRET_UNKNOWN", e)),
  SiretClosed: (e) => new Unprocessable(body("SIRET_CLOSED", e)),
  RegistryUnavailable: (e) =>
    new ServiceUnavailable(body(e.reason === "THROTTLED" ? "REGISTRY_THROTTLED" : "REGISTRY_UNAVAILABLE", e)),
  InvalidCredentials: (e) => new Unauthorized(body("INVALID_CREDENTIALS", e)),
  LoginThrottled: (e) => new TooManyRequests(body("LOGIN_THROTTLED", e)),
  ResetThrottled: (e) => new TooManyRequests(body("RESET_THROTTLED", e)),
  Unauthenticated: (e) => new Unauthorized(body(e.reason === "EXPIRED" ? "SESSION_EXPIRED" : "UNAUTHENTICATED", e)),
  ResetTokenInvalid: (e) => new BadRequest(body("RESET_TOKEN_INVALID", e)),
  ResetTokenExpired: (e) => new BadRequest(body("RESET_TOKEN_EXPIRED", e)),
  ResetTokenUsed: (e) => new BadRequest(body("RESET_TOKEN_USED", e)),
  PlanUnavailable: (e) => new Unprocessable(body("PLAN_UNAVAILABLE", e)),
  InvalidOrderOption: (e) => new Unprocessable(body("INVALID_ORDER_OPTION", e)),
  OrderNotFound: (e) => new NotFound(body("ORDER_NOT_FOUND", e)),
  SubscriptionNotFound: (e) => new NotFound(body("SUBSCRIPTION_NOT_FOUND", e)),
  SubscriptionEnded: (e) => new Conflict(body("SUBSCRIPTION_ENDED", e)),
  ProductUnavailable: (e) => e.busy ? new TooManyRequests(body(e.code, e)) : new ServiceUnavailable(body(e.code, e)),
  PaymentDeclined: (e) => new PaymentRequired(body("PAYMENT_DECLINED", e)),
  PaymentUnavailable: (e) => new ServiceUnavailable(body("PAYMENT_UNAVAILABLE", e)),
  PaymentsNotConfigured: (e) => new ServiceUnavailable(body("PAYMENTS_NOT_CONFIGURED", e)),
  VpsNotFound: (e) => new NotFound(body("VPS_NOT_FOUND", e)),
  VpsUnavailable: (e) =>
    new Conflict(body(e.status === "suspended" ? "VPS_SUSPENDED" : e.status === "destroyed" ? "VPS_DESTROYED" : "VPS_NOT_RUNNING", e)),
  SnapshotLimitReached: (e) => new Conflict(body("SNAPSHOT_LIMIT_REACHED", e)),
  InvalidSnapshotName: (e) => new Unprocessable(body("INVALID_SNAPSHOT_NAME", e)),
  SnapshotNotFound: (e) => new NotFound(body("SNAPSHOT_NOT_FOUND", e)),
  SnapshotExists: (e) => new Conflict(body("SNAPSHOT_EXISTS", e)),
  SnapshotBusy: (e) => new Conflict(body("SNAPSHOT_BUSY", e)),
  // Upstream details (hosts, nodes, task logs) stay in our logs; the customer gets a generic, stable answer.
  VirtualizationUnavailable: () => upstreamUnavailable,
  TaskFailed: () => upstreamUnavailable,
  ClusterUnknown: () => upstreamUnavailable,
  VmNotFound: () => upstreamUnavailable,
  ShutdownTimedOut: (e) =>
    new Conflict(body("SHUTDOWN_TIMED_OUT", {
      message: `The VPS did not shut down within ${e.timeoutSeconds} seconds and is still running; power it off to force it.`
    })),
  GameServerNotFound: (e) => new NotFound(body("GAME_SERVER_NOT_FOUND", e)),
  GameServerUnavailable: (e) =>
    new Conflict(body(e.status === "suspended" ? "GAME_SERVER_SUSPENDED" : "GAME_SERVER_DELETED", e)),
  ConsoleTokenInvalid: (e) => new Unauthorized(body("CONSOLE_TOKEN_INVALID", e)),
  // The panel's own words (hosts, nodes, daemon messages) stay in our logs; the customer gets ours.
  GamePanelUnavailable: () => panelUnavailable,
  PanelUnknown: () => panelUnavailable,
  GamePanelThrottled: () =>
    new TooManyRequests({ error: errorBody("GAME_PANEL_BUSY", "The game panel is busy; please try again in a moment.") }),
  PanelValidationFailed: (e) =>
    new Unprocessable({
      error: errorBody(
        "INVALID_REQUEST",
        "The game panel refused some of the values sent.",
        e.fields.map((f) => ({ field: f.field, rule: f.rule }))
      )
    }),
  ServerStateConflict: () =>
    new Conflict({
      error: errorBody("GAME_SERVER_BUSY", "The game server cannot do this in its current state (installing, restoring or suspended).")
    }),
  PanelResourceNotFound: () => new NotFound({ error: errorBody("NOT_FOUND", "No such file, folder or backup.") }),
  PanelRejected: (e) => new BadRequest({ error: errorBody(...panelRefusal(e.code)) })
} satisfies Table

/** The panel's refusals we can name (its DisplayException family), in our words; anything else is generic. */
const panelRefusal = (code: string): [string, string] => {
  switch (code) {
    case "TooManyBackupsException":
      return ["BACKUP_LIMIT_REACHED", "This plan's backup limit is reached; delete a backup first."]
    case "BackupLockedException":
      return ["BACKUP_LOCKED", "This backup is locked; unlock it before deleting it."]
    case "FileSizeTooLargeException":
      return ["FILE_TOO_LARGE", "This file is too large to open in the editor; download it instead."]
    case "FileExistsException":
      return ["FILE_EXISTS", "A file or folder with this name already exists."]
    default:
      return ["GAME_PANEL_REFUSED", "The game panel refused this request."]
  }
}

const panelUnavailable = new ServiceUnavailable({
  error: errorBody("GAME_PANEL_UNAVAILABLE", "The game panel did not complete the operation; please try again shortly.")
})

const upstreamUnavailable = new ServiceUnavailable({
  error: errorBody("UPSTREAM_UNAVAILABLE", "The virtualization platform did not complete the operation; please try again shortly.")
})

/** The answer for an order, subscription, VPS or game server that is not the caller's (or a malformed id of one). */
export const missingAnswers = {
  order: table.OrderNotFound(new BillingErrors.OrderNotFound()),
  subscription: table.SubscriptionNotFound(new BillingErrors.SubscriptionNotFound()),
  vps: table.VpsNotFound(new VpsActions.VpsNotFound()),
  gameServer: table.GameServerNotFound(new GameErrors.GameServerNotFound())
} as const

export const toApiError = (e: DomainError): ApiError => (table[e._tag] as (e: DomainError) => ApiError)(e)

/** Maps a use case's domain failures to the HTTP envelope. */
export const mapDomainErrors = <A, E extends DomainError, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.mapError(effect, toApiError)
