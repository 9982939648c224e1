// Liveness (the process answers) and readiness (the database answers).
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Health } from "../../ports/Health.ts"
import { Api } from "./Api.ts"
import { errorBody, ServiceUnavailable } from "./ApiErrors.ts"

export const SystemHandlers = HttpApiBuilder.group(Api, "system", Effect.fn(function*(handlers) {
  const health = yield* Health
  return handlers
    .handle("health", () => Effect.succeed({ status: "ok" as const }))
    .handle("ready", () =>
      health.checkStore.pipe(
        Effect.as({ status: "ready" as const }),
        Effect.mapError(() => new ServiceUnavailable({ error: errorBody("DATABASE_UNREACHABLE", "The database does not answer.") }))
      ))
}))
