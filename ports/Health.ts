// Whether the backing store answers (readiness).
import { Context, type Effect, Schema } from "effect"

export class StoreUnreachable extends Schema.TaggedError<StoreUnreachable>()("StoreUnreachable", {}) {}

export class Health extends Context.Service<Health, {
  readonly checkStore: Effect.Effect<void, StoreUnreachable>
}>()("zh/ports/Health") {}
