// A service record's life state (a VPS, a game server): its status with its grace period and the date it ended.
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { stored } from "./failures.ts"

/**
 * `UPDATE <table> SET status …` for one record. An absent option keeps its column; an explicit null grace period
 * clears it.
 */
export const setLifeStatus = (
  sql: SqlClient.SqlClient,
  table: "vps" | "game_servers",
  endedColumn: "destroyed_at" | "deleted_at"
) =>
(id: string, status: string, options: { readonly graceUntil?: Date | null | undefined; readonly endedAt?: Date | undefined }) =>
  sql`UPDATE ${sql(table)} SET status = ${status},
        grace_until = CASE WHEN ${options.graceUntil === undefined} THEN grace_until ELSE ${options.graceUntil ?? null}::timestamptz END,
        ${sql(endedColumn)} = CASE WHEN ${options.endedAt === undefined} THEN ${sql(endedColumn)} ELSE ${options.endedAt ?? null}::timestamptz END
      WHERE id = ${id}`.pipe(Effect.asVoid, stored)
