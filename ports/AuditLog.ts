// The append-only audit log: rows are added, never changed nor removed (the database refuses it).
import { Context, type Effect } from "effect"
import type { AuditEntry, AuditEvent, AuditQuery } from "../domain/audit/AuditEvent.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class AuditLog extends Context.Service<AuditLog, {
  /** Adds one event; inside a unit of work it commits or rolls back with the action it records. */
  append(entry: AuditEntry): Effect.Effect<void, DatabaseUnavailable>
  /** Newest first, keyset-paginated by id. */
  list(query: AuditQuery): Effect.Effect<ReadonlyArray<AuditEvent>, DatabaseUnavailable>
}>()("zh/ports/AuditLog") {}
