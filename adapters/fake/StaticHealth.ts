// Health for in-memory setups: the store is whatever the test says it is.
import { Effect, Layer } from "effect"
import { Health, StoreUnreachable } from "../../ports/Health.ts"

export const layer = (reachable = true) =>
  Layer.succeed(Health, Health.of({ checkStore: reachable ? Effect.void : Effect.fail(new StoreUnreachable()) }))
