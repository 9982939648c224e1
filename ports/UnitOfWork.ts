// Runs several repository calls as one all-or-nothing unit.
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class UnitOfWork extends Context.Service<UnitOfWork, {
  transaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | DatabaseUnavailable, R>
}>()("zh/ports/UnitOfWork") {}
