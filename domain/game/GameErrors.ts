// What can go wrong when a customer uses a game server.
import { Schema } from "effect"

export class GameServerNotFound extends Schema.TaggedError<GameServerNotFound>()("GameServerNotFound", {}) {
  override get message() {
    return "No such game server."
  }
}

export class GameServerUnavailable extends Schema.TaggedError<GameServerUnavailable>()("GameServerUnavailable", {
  status: Schema.String
}) {
  override get message() {
    return this.status === "suspended"
      ? "This game server is suspended because its subscription lapsed; renew it to use it again."
      : "This game server has been deleted."
  }
}

/** The console token is missing, expired, or was issued for another user or server. */
export class ConsoleTokenInvalid extends Schema.TaggedError<ConsoleTokenInvalid>()("ConsoleTokenInvalid", {}) {
  override get message() {
    return "This console token is not valid for this server; ask for a new one."
  }
}
