// Which panel allocation (IP:port) and how much of a node each order holds, decided atomically: two concurrent
// orders never get the same allocation, nor both the last room on a node.
import { Context, type Effect, type Option } from "effect"
import type { AllocationClaim } from "../domain/game/GameServer.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class GameAllocations extends Context.Service<GameAllocations, {
  /**
   * Under a panel-wide lock, hands every live claim of the panel to `choose` and records what it picks for
   * `holder`. Idempotent per holder (its existing claim is returned without calling `choose`). An allocation held
   * by another claim is never recorded twice (a defect if `choose` tries).
   */
  claim(
    panel: string,
    holder: string,
    choose: (claimed: ReadonlyArray<AllocationClaim>) => Option.Option<Omit<AllocationClaim, "holder" | "panel" | "created">>
  ): Effect.Effect<Option.Option<AllocationClaim>, DatabaseUnavailable>
  /** The panel's live claims, as `claim` would hand them to `choose` (read without the lock: a moment's view). */
  onPanel(panel: string): Effect.Effect<ReadonlyArray<AllocationClaim>, DatabaseUnavailable>
  held(holder: string): Effect.Effect<Option.Option<AllocationClaim>, DatabaseUnavailable>
  /** The server exists on the panel now: its node's figures include it, the claim's resources stop counting. */
  markCreated(holder: string): Effect.Effect<void, DatabaseUnavailable>
  /** The allocation went back to the panel (server deleted, or never created). */
  release(holder: string): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/GameAllocations") {}
