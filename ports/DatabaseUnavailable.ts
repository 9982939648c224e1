// The one failure every persistence port may answer besides its own: the database did not answer. Retryable; the
// edge answers 503 DATABASE_UNREACHABLE with Retry-After. Any other database failure is a bug (a defect).
import { Schema } from "effect"

export class DatabaseUnavailable extends Schema.TaggedError<DatabaseUnavailable>()("DatabaseUnavailable", {
  /** The driver's error, for our logs only. */
  cause: Schema.optional(Schema.Defect())
}) {
  override get message() {
    return "The database does not answer."
  }
}
