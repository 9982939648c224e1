// One line of the append-only audit log: who did what, to what, when, from where, and how it was before and after.
// Operators read all of it; a customer reads the security events of their own account.
import type { Role } from "../account/Role.ts"
import type { UserId } from "../account/User.ts"

/** Every action the log knows, under a stable name (stored as text; filters use these names). */
export const AUDIT_ACTIONS = [
  // A customer's account (the actor is the customer, or nobody for a failed sign-in).
  "auth.sign_in",
  "auth.sign_in_failed",
  "auth.logout_all",
  "auth.password_reset",
  // A customer's services.
  "vps.power",
  "vps.console_opened",
  "game.power",
  "game.console_opened",
  "game.files_changed",
  // Billing (see README "Audit log": recorded by billing's own use cases).
  "order.placed",
  "payment.succeeded",
  "payment.failed",
  "subscription.cancelled",
  "subscription.withdrawn",
  // Operators.
  "staff.role_granted",
  "staff.role_revoked",
  "staff.customer_viewed",
  "staff.sessions_ended",
  "staff.service_suspended",
  "staff.service_unsuspended",
  "staff.refund_issued",
  "staff.notice_resent",
  "staff.provisioning_resumed",
  "staff.order_retried",
  "staff.service_terminated",
  "catalog.plan_sale_changed",
  "admin.view_as"
] as const
export type AuditAction = typeof AUDIT_ACTIONS[number]

/** What a customer sees of their own account's trail. */
export const SECURITY_ACTIONS: ReadonlyArray<AuditAction> = [
  "auth.sign_in",
  "auth.sign_in_failed",
  "auth.logout_all",
  "auth.password_reset",
  "vps.console_opened",
  "game.console_opened",
  "staff.role_granted",
  "staff.role_revoked",
  "staff.sessions_ended"
]

/** Who acted: a user in the role they held then, the platform itself (CLI, cron), or nobody signed in. */
export type ActorRole = Role | "system" | "anonymous"

export interface AuditEntry {
  readonly at: Date
  readonly actorId: UserId | null
  readonly actorRole: ActorRole
  readonly action: AuditAction
  /** The account this concerns (whose trail it joins); null when there is none (a sign-in for an unknown e-mail). */
  readonly subjectUserId: UserId | null
  /** What was acted on, as a type and an id: `vps` and its id, `user` and its id, … */
  readonly target: { readonly type: string; readonly id: string } | null
  /** The client address of the request, when there was one. */
  readonly address: string | null
  /** The state before and after, for a change of state (JSON values). */
  readonly before: unknown
  readonly after: unknown
  /** Anything else worth keeping, small (JSON). */
  readonly details: unknown
}

export interface AuditEvent extends AuditEntry {
  /** Increasing with every append: the order of the log and its keyset cursor. */
  readonly id: string
}

export interface AuditQuery {
  readonly actorId?: UserId | undefined
  readonly subjectUserId?: UserId | undefined
  readonly actions?: ReadonlyArray<string> | undefined
  /** Only events older than this id (the previous page's last). */
  readonly before?: string | undefined
  readonly limit: number
}

/**
 * What the log keeps of a text a client sent: a lone surrogate becomes U+FFFD and NUL is dropped (PostgreSQL's text
 * and jsonb hold neither). A failed sign-in's e-mail is kept as near as it can be, and never fails what it records.
 */
export const storableText = (text: string): string => text.toWellFormed().replaceAll("\u0000", "")

/** An entry with every text in it storable (`storableText`), JSON values included. */
export const storableEntry = (entry: AuditEntry): AuditEntry => {
  const json = (value: unknown): unknown =>
    value === null || value === undefined
      ? null
      : JSON.parse(JSON.stringify(value, (_key, inner: unknown) => (typeof inner === "string" ? storableText(inner) : inner)))
  const text = (value: string | null) => (value === null ? null : storableText(value))
  return {
    ...entry,
    target: entry.target === null ? null : { type: storableText(entry.target.type), id: storableText(entry.target.id) },
    address: text(entry.address),
    before: json(entry.before),
    after: json(entry.after),
    details: json(entry.details)
  }
}
