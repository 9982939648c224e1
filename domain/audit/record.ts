// Writing to the audit log: the time is the Clock's, the rest is what the caller knows of the action.
import { Clock, Effect } from "effect"
import { AuditLog } from "../../ports/AuditLog.ts"
import type { Role } from "../account/Role.ts"
import type { UserId } from "../account/User.ts"
import type { AuditAction, AuditEntry } from "./AuditEvent.ts"

export type AuditInput =
  & Pick<AuditEntry, "actorId" | "actorRole" | "action" | "subjectUserId">
  & AuditExtra

export type AuditExtra = Partial<Pick<AuditEntry, "target" | "address" | "before" | "after" | "details">>

/** Appends one event, now. */
export const recordAudit = Effect.fn("recordAudit")(function*(input: AuditInput) {
  const at = new Date(yield* Clock.currentTimeMillis)
  yield* (yield* AuditLog).append({
    target: null,
    address: null,
    before: null,
    after: null,
    details: null,
    ...input,
    at
  })
})

/** A user's own action on their own account or services: they are both the actor and the subject. */
export const recordOwnAction = (
  user: { readonly id: UserId; readonly role: Role },
  action: AuditAction,
  extra: AuditExtra = {}
) => recordAudit({ actorId: user.id, actorRole: user.role, action, subjectUserId: user.id, ...extra })
