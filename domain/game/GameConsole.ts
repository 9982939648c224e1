// The game console's rules: only the owner of an active server opens one, it stays open while that holds, and the
// customer may send upstream only what the panel's own console offers them (the admin token upstream would allow
// anything).
import { Effect, Option } from "effect"
import type { ConsoleRequest } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { ownedByIdentifier, usableGameServer } from "./GameActions.ts"

/** The server whose console `userId` may open: theirs, and active. */
export const gameServerForConsole = (userId: string, identifier: string) =>
  Effect.flatMap(ownedByIdentifier(userId, identifier), usableGameServer)

/** Whether an open console of this server may stay open: still the owner's, still active. */
export const gameConsoleUsable = (serverId: string, userId: string) =>
  Effect.map(Effect.flatMap(GameServerRecords, (records) => records.get(serverId)), (current) =>
    Option.isSome(current) && current.value.status === "active" && current.value.userId === userId)

/** A command longer than this is not one a person typed. */
const MAX_COMMAND_LENGTH = 4096

/** What the customer may send upstream: a command (bounded), a power signal, a request for logs or stats. */
export const allowedConsoleRequest = (request: ConsoleRequest): boolean =>
  request._tag !== "Command" || request.line.length <= MAX_COMMAND_LENGTH
