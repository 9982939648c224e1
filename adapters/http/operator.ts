// The operator at work in a back-office handler: the signed-in staff member, in their role, and the request's address.
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import type { Operator } from "../../domain/backoffice/customers.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { clientAddress } from "./cookies.ts"
import type { HttpSettings } from "./HttpSettings.ts"

export const currentOperator = (settings: HttpSettings["Service"]) =>
  Effect.gen(function*() {
    const session = yield* CurrentSession
    const request = yield* HttpServerRequest.HttpServerRequest
    return { id: session.user.id, role: session.user.role, address: clientAddress(settings, request) ?? null } satisfies Operator
  })

/** Captures the services the use cases need when the handler layer is built (they are not per-request). */
export const withServices = <S>() =>
  Effect.map(Effect.context<S>(), (services) => <A, E>(effect: Effect.Effect<A, E, S>) => Effect.provideContext(effect, services))
