// Alerts: what an operator must look at (a resource that is not ours where ours should be, a cleanup that keeps
// failing). One Error-level log line with a stable prefix, so log-based alerting can match it.
import { Effect } from "effect"

export const ALERT_PREFIX = "ALERT"

export const alert = (message: string, annotations: Readonly<Record<string, unknown>> = {}) =>
  Effect.logError(`${ALERT_PREFIX} ${message}`).pipe(Effect.annotateLogs(annotations))
