// Thin handlers for game servers and the console token: one use case each, errors mapped in one table.
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import {
  issueConsoleToken,
  listGameServers,
  ownedGameServer,
  powerGameServer
} from "../../domain/game/GameActions.ts"
import type { GameServer } from "../../domain/game/GameServer.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { Api } from "./Api.ts"
import { makeOwnAction } from "./audited.ts"
import { CustomerBudgets } from "./customerBudget.ts"
import { mapDomainErrors } from "./errorMapping.ts"

export const gameServerView = (s: GameServer) => ({
  id: s.id,
  subscriptionId: s.subscriptionId,
  planId: s.planId,
  name: s.name,
  identifier: s.identifier,
  address: s.address,
  status: s.status,
  ...(s.graceUntil === null ? {} : { graceUntil: s.graceUntil.toISOString() }),
  createdAt: s.createdAt.toISOString()
})

const userId = Effect.map(CurrentSession, (s) => s.user.id)
const holder = Effect.map(CurrentSession, (s) => ({ userId: s.user.id, sessionId: s.id }))

const withServices = <S>() =>
  Effect.map(Effect.context<S>(), (services) => <A, E>(effect: Effect.Effect<A, E, S>) => Effect.provideContext(effect, services))

/** `socket`: our WebSocket, on the public origin (ws: for http:, wss: for https:). */
export const consoleSocketUrl = (publicUrl: string, identifier: string) => {
  const url = new URL(`/api/client/servers/${encodeURIComponent(identifier)}/ws`, publicUrl)
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
  return url.href
}

export const GameHandlers = (publicUrl: string) => [
  HttpApiBuilder.group(Api, "gameServers", Effect.fn(function*(handlers) {
    const run = yield* withServices<Effect.Services<ReturnType<typeof powerGameServer>>>()
    // Power reaches the panel: the customer's share of its budget is spent first (429 RATE_LIMITED past it).
    const budgets = yield* CustomerBudgets
    const audit = yield* makeOwnAction
    return handlers
      .handle("list", () =>
        Effect.flatMap(userId, (user) => run(listGameServers(user))).pipe(
          Effect.map((all) => ({ gameServers: all.map(gameServerView) })),
          mapDomainErrors
        ))
      .handle("get", ({ params }) =>
        Effect.flatMap(userId, (user) => run(ownedGameServer(user, params.id))).pipe(
          Effect.map((s) => ({ gameServer: gameServerView(s) })),
          mapDomainErrors
        ))
      .handle("power", ({ params, payload }) =>
        Effect.flatMap(userId, (user) =>
          Effect.andThen(
            mapDomainErrors(budgets.spend(user, "game-panel")),
            run(powerGameServer(user, params.id, payload.signal)).pipe(
              Effect.andThen(audit.current("game.power", { type: "game_server", id: params.id }, { signal: payload.signal })),
              mapDomainErrors
            )
          )))
  })),
  HttpApiBuilder.group(Api, "gameClient", Effect.fn(function*(handlers) {
    const run = yield* withServices<Effect.Services<ReturnType<typeof issueConsoleToken>>>()
    // A token leads to a console, which the panel serves: it is spent from the same share.
    const budgets = yield* CustomerBudgets
    return handlers.handle("websocket", ({ params }) =>
      Effect.flatMap(holder, (h) =>
        Effect.andThen(
          mapDomainErrors(budgets.spend(h.userId, "game-panel")),
          run(issueConsoleToken(h, params.id)).pipe(
            Effect.map(({ server, token }) => ({ data: { token, socket: consoleSocketUrl(publicUrl, server.identifier) } })),
            mapDomainErrors
          )
        )))
  }))
] as const
