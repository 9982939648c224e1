// What an owner can do with a game server: see it, power it, and get a console token. Another user's server does
// not exist for them (GameServerNotFound), and nothing runs on a suspended or deleted one.
import { Clock, Duration, Effect, Option } from "effect"
import type { SessionId } from "../account/SessionRecord.ts"
import { sessionIsLive } from "../account/Sessions.ts"
import { ConsoleTokens } from "../../ports/ConsoleTokens.ts"
import { GamePanel, type PowerSignal } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { ConsoleTokenInvalid, GameServerNotFound, GameServerUnavailable } from "./GameErrors.ts"
import type { GameServer } from "./GameServer.ts"
import { GameSettings } from "./GameSettings.ts"

export const ownedGameServer = Effect.fn("ownedGameServer")(function*(userId: string, id: string) {
  const found = yield* (yield* GameServerRecords).get(id)
  if (Option.isNone(found) || found.value.userId !== userId || found.value.status === "deleted") {
    return yield* new GameServerNotFound()
  }
  return found.value
})

/** By the panel identifier, the `:id` of the specification's `/api/client/servers/:id/…` routes. */
export const ownedByIdentifier = Effect.fn("ownedByIdentifier")(function*(userId: string, identifier: string) {
  const found = yield* (yield* GameServerRecords).byIdentifier(identifier)
  if (Option.isNone(found) || found.value.userId !== userId || found.value.status === "deleted") {
    return yield* new GameServerNotFound()
  }
  return found.value
})

/** Usable: active (a suspended server refuses console, power and files in our API, whatever the panel says). */
export const usableGameServer = (server: GameServer) =>
  server.status === "active" ? Effect.succeed(server) : Effect.fail(new GameServerUnavailable({ status: server.status }))

export const listGameServers = (userId: string) =>
  Effect.map(Effect.flatMap(GameServerRecords, (r) => r.forUser(userId)), (all) => all.filter((s) => s.status !== "deleted"))

export const powerGameServer = Effect.fn("powerGameServer")(function*(userId: string, id: string, signal: PowerSignal) {
  const server = yield* Effect.flatMap(ownedGameServer(userId, id), usableGameServer)
  yield* (yield* GamePanel).power(server.panel, server.uuid, signal)
  return server
})

/** Who asks for, or presents, a console token: a user in one of their sessions. */
export interface ConsoleHolder {
  readonly userId: string
  readonly sessionId: SessionId
}

/** Our own console token for the owner of an active server (the Wings token stays in the backend). */
export const issueConsoleToken = Effect.fn("issueConsoleToken")(function*(holder: ConsoleHolder, identifier: string) {
  const server = yield* Effect.flatMap(ownedByIdentifier(holder.userId, identifier), usableGameServer)
  const lifetime = (yield* GameSettings).consoleTokenLifetime
  const expiresAt = new Date((yield* Clock.currentTimeMillis) + Duration.toMillis(lifetime))
  const token = yield* (yield* ConsoleTokens).issue({
    userId: holder.userId,
    sessionId: holder.sessionId,
    server: server.identifier,
    expiresAt
  })
  return { server, token, expiresAt }
})

/**
 * The token must be ours, unexpired, issued to this user in this session for this server, and that session must
 * still live: logging out (here or everywhere) or a password reset voids every console token it was given.
 */
export const checkConsoleToken = Effect.fn("checkConsoleToken")(function*(holder: ConsoleHolder, identifier: string, token: string) {
  const grant = yield* (yield* ConsoleTokens).verify(token)
  if (
    Option.isNone(grant) || grant.value.userId !== holder.userId || grant.value.sessionId !== holder.sessionId ||
    grant.value.server !== identifier || !(yield* sessionIsLive(holder.sessionId))
  ) {
    return yield* new ConsoleTokenInvalid()
  }
  return grant.value
})
