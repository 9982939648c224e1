// The API client: JSON over fetch with the session cookie; every failure becomes an ApiError carrying the
// envelope's `code`, which the views turn into a translated sentence (never the raw body).
import type {
  BillingProfileView,
  ErrorBody,
  InvoiceView,
  GamePlanView,
  GameServerView,
  OrderView,
  SecurityEventsPage as SecurityEventsPageView,
  SecurityEventView,
  PaymentAnswerView,
  PaymentView,
  RenewalView,
  SavedCardView,
  SnapshotView,
  SubscriptionView,
  AuditEventView,
  AdminCatalogView,
  DashboardView,
  ViewAsView,
  PlanSaleView,
  PlansEnvelope,
  AuditPage as AuditPageView,
  SessionView,
  StaffCustomerPage as StaffCustomerPageView,
  UserView,
  VpsPlanView,
  VpsView,
  FindingsView,
  NoticeView,
  RefundView,
  ServiceHoldView,
  StaffOrderView,
  StaffPaymentView,
  StaffServicePage as StaffServicePageView
} from "../../../adapters/http/views.ts"
import { hasKey, t } from "./i18n.ts"

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly details: unknown
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
  }
}

/** Called on a 401 from an authenticated call (the session ended): the app goes back to the login page. */
let onUnauthenticated: (() => void) | undefined
export const setUnauthenticatedHandler = (handler: () => void): void => {
  onUnauthenticated = handler
}

const toError = async (response: Response): Promise<ApiError> => {
  let code = response.status === 429 ? "TOO_MANY_REQUESTS" : `HTTP_${response.status}`
  let message = response.statusText
  let details: unknown
  try {
    // A proxy's or an older server's answer may not be ours: every field is checked before it is read.
    const body = (await response.json()) as { error?: Partial<Record<keyof ErrorBody, unknown>> }
    if (body.error !== undefined && typeof body.error.code === "string") {
      code = body.error.code
      message = typeof body.error.message === "string" ? body.error.message : message
      details = body.error.details
    }
  } catch {
    // Not JSON (a proxy's page): the status alone.
  }
  return new ApiError(response.status, code, message, details)
}

export interface RequestOptions {
  readonly body?: unknown
  /** Raw body (multipart, text); sent as is. */
  readonly raw?: BodyInit
  readonly contentType?: string
  /** Answer as text instead of JSON. */
  readonly text?: boolean
  /** Answer as the body's bytes, untouched (file contents: decoding them is the caller's business). */
  readonly bytes?: boolean
  /** Do not bounce to the login page on 401 (the login form itself, the session probe). */
  readonly anonymous?: boolean
  readonly signal?: AbortSignal
}

export const request = async <A>(method: string, path: string, options: RequestOptions = {}): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  let body: BodyInit | undefined
  if (options.raw !== undefined) {
    body = options.raw
    if (options.contentType !== undefined) headers["content-type"] = options.contentType
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] = "application/json"
  }
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(body === undefined ? {} : { body }),
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e
    throw new ApiError(0, "NETWORK", "network error")
  }
  if (!response.ok) {
    const error = await toError(response)
    if (response.status === 401 && !options.anonymous) onUnauthenticated?.()
    throw error
  }
  if (response.status === 204 || response.status === 202 && response.headers.get("content-length") === "0") {
    return undefined as A
  }
  if (options.text) return (await response.text()) as A
  if (options.bytes) return new Uint8Array(await response.arrayBuffer()) as A
  const text = await response.text()
  return (text === "" ? undefined : JSON.parse(text)) as A
}

export const api = {
  get: <A>(path: string, options?: RequestOptions) => request<A>("GET", path, options),
  post: <A>(path: string, body?: unknown, options?: RequestOptions) =>
    request<A>("POST", path, { ...options, ...(body === undefined ? {} : { body }) }),
  put: <A>(path: string, body?: unknown, options?: RequestOptions) =>
    request<A>("PUT", path, { ...options, ...(body === undefined ? {} : { body }) }),
  del: <A>(path: string, options?: RequestOptions) => request<A>("DELETE", path, options)
}

/** The user-facing sentence for any failure, in the current language. */
export const errorText = (error: unknown): string => {
  if (error instanceof ApiError) {
    const key = `err.${error.code}`
    if (hasKey(key)) return t(key)
    if (error.code.startsWith("PASSWORD_")) return t("err.PASSWORD_TOO_SHORT")
    if (error.status === 429) return t("err.TOO_MANY_REQUESTS")
  }
  return t("err.generic")
}

// --- The API's shapes: the very schemas the server answers with (types only: no schema code in the bundle) ---

export type User = typeof UserView.Type
export type VpsPlan = typeof VpsPlanView.Type
export type GamePlan = typeof GamePlanView.Type
export type Plan = VpsPlan | GamePlan
export type Plans = typeof PlansEnvelope.Type
export type Order = typeof OrderView.Type
export type Subscription = typeof SubscriptionView.Type
export type Vps = typeof VpsView.Type
export type Snapshot = typeof SnapshotView.Type
export type GameServer = typeof GameServerView.Type
export type SecurityEvent = typeof SecurityEventView.Type
export type SecurityEventsPage = typeof SecurityEventsPageView.Type
export type Invoice = typeof InvoiceView.Type
export type BillingProfile = typeof BillingProfileView.Type
export type Renewal = typeof RenewalView.Type
export type PaymentAnswer = typeof PaymentAnswerView.Type
export type SavedCard = typeof SavedCardView.Type
export type Payment = typeof PaymentView.Type
export type AuditEvent = typeof AuditEventView.Type
export type AdminCatalog = typeof AdminCatalogView.Type
export type Dashboard = typeof DashboardView.Type
export type ViewAs = typeof ViewAsView.Type
export type AdminPlan = AdminCatalog["plans"][number]
export type PlanSale = typeof PlanSaleView.Type
export type StaffServicePage = typeof StaffServicePageView.Type
export type ServiceHold = typeof ServiceHoldView.Type
export type ServiceFindings = typeof FindingsView.Type
export type StaffOrder = typeof StaffOrderView.Type
export type StaffPayment = typeof StaffPaymentView.Type
export type RefundAnswer = typeof RefundView.Type
export type NoticeRecord = typeof NoticeView.Type
export type AuditPage = typeof AuditPageView.Type
export type Session = typeof SessionView.Type
export type StaffCustomerPage = typeof StaffCustomerPageView.Type

// The panel's Client-API objects, relayed unchanged (DESIGN §3): their shape is Pterodactyl's, not ours.

/** Pterodactyl Client-API file_object attributes. */
export interface FileObject {
  readonly name: string
  readonly mode: string
  readonly size: number
  readonly is_file: boolean
  readonly is_symlink: boolean
  readonly mimetype: string
  readonly created_at: string
  readonly modified_at: string
}

/** Pterodactyl Client-API backup attributes. */
export interface Backup {
  readonly uuid: string
  readonly name: string
  readonly ignored_files: ReadonlyArray<string>
  readonly checksum: string | null
  readonly bytes: number
  readonly is_successful: boolean
  readonly is_locked: boolean
  readonly created_at: string
  readonly completed_at: string | null
}

export interface ListOf<A> {
  readonly object: "list"
  readonly data: ReadonlyArray<{ readonly object: string; readonly attributes: A }>
}
