// The game servers we run, one row each.
import { Context, type Effect, type Option } from "effect"
import type { GameServer, GameServerStatus } from "../domain/game/GameServer.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class GameServerRecords extends Context.Service<GameServerRecords, {
  /** Idempotent per order: a retried step returns the record created the first time. */
  create(server: GameServer): Effect.Effect<GameServer, DatabaseUnavailable>
  get(id: string): Effect.Effect<Option.Option<GameServer>, DatabaseUnavailable>
  /** By the panel identifier (unique among our records). */
  byIdentifier(identifier: string): Effect.Effect<Option.Option<GameServer>, DatabaseUnavailable>
  bySubscription(subscriptionId: string): Effect.Effect<Option.Option<GameServer>, DatabaseUnavailable>
  forUser(userId: string): Effect.Effect<ReadonlyArray<GameServer>, DatabaseUnavailable>
  /** Every game server not deleted (for reconciling our records with the panels). */
  readonly live: Effect.Effect<ReadonlyArray<GameServer>, DatabaseUnavailable>
  setStatus(
    id: string,
    status: GameServerStatus,
    options?: { readonly graceUntil?: Date | null; readonly deletedAt?: Date }
  ): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/GameServerRecords") {}
