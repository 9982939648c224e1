// The game console's rules: only the owner of an active server opens one, it stays open while that holds, and the
// customer may send upstream only what the panel's own console offers them (the admin token upstream would allow
// anything).
import { Effect, Option } from "effect"
import type { ConsoleEvent } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { ownedByIdentifier, usableGameServer } from "./GameActions.ts"

/** The server whose console `userId` may open: theirs, and active. */
export const gameServerForConsole = (userId: string, identifier: string) =>
  Effect.flatMap(ownedByIdentifier(userId, identifier), usableGameServer)

/** Whether an open console of this server may stay open: still the owner's, still active. */
export const gameConsoleUsable = (serverId: string, userId: string) =>
  Effect.map(Effect.flatMap(GameServerRecords, (records) => records.get(serverId)), (current) =>
    Option.isSome(current) && current.value.status === "active" && current.value.userId === userId)

const POWER = new Set(["start", "stop", "restart", "kill"])

/** What the customer may send upstream: a command (bounded), a power signal, a request for logs or stats. */
export const allowedConsoleEvent = (frame: ConsoleEvent): boolean => {
  switch (frame.event) {
    case "send command":
      return frame.args.length === 1 && frame.args[0]!.length <= 4096
    case "set state":
      return frame.args.length === 1 && POWER.has(frame.args[0]!)
    case "send logs":
    case "send stats":
      return true
    default:
      return false
  }
}
