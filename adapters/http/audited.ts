// The customers' own actions that reach the audit log from the edge (power, consoles, file changes): the action is
// done, so an audit row that cannot be written is logged as an error, never answered as the action's failure.
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import type { Session } from "../../domain/account/Sessions.ts"
import type { AuditAction, AuditEntry } from "../../domain/audit/AuditEvent.ts"
import { recordOwnAction } from "../../domain/audit/record.ts"
import { AuditLog } from "../../ports/AuditLog.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { clientAddress } from "./cookies.ts"
import { HttpSettings } from "./HttpSettings.ts"

export type OwnAction = (
  session: Session,
  request: HttpServerRequest.HttpServerRequest,
  action: AuditAction,
  target: AuditEntry["target"],
  details?: unknown
) => Effect.Effect<void>

/** Records a signed-in user's own action, from the request's client address; its services resolved once. */
export const makeOwnAction = Effect.gen(function*() {
  const log = yield* AuditLog
  const settings = yield* HttpSettings
  const own: OwnAction = (session, request, action, target, details = null) =>
    recordOwnAction(session.user, action, { target, address: clientAddress(settings, request) ?? null, details }).pipe(
      Effect.provideService(AuditLog, log),
      Effect.catch((e) => Effect.logError(`audit: ${action} on ${target?.type ?? "-"} ${target?.id ?? "-"} not recorded: ${e.message}`))
    )
  /** In an HttpApi handler: the session and the request are the current ones. */
  const current = (action: AuditAction, target: AuditEntry["target"], details?: unknown) =>
    Effect.flatMap(CurrentSession, (session) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => own(session, request, action, target, details)))
  return { own, current }
})
