// Runs several repository calls as one all-or-nothing unit.
import { Context, type Effect } from "effect"

export class UnitOfWork extends Context.Service<UnitOfWork, {
  transaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
}>()("zh/ports/UnitOfWork") {}
