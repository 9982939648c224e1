// The short-lived tokens our game console hands out (`GET /api/client/servers/:id/websocket`): bound to one user,
// one of their sessions and one server, signed by us. The panel's own Wings token never leaves the backend.
import { Context, type Effect, type Option } from "effect"

export interface ConsoleGrant {
  readonly userId: string
  /** The session the token was issued to: it stops working when that session ends. */
  readonly sessionId: string
  /** The panel server identifier the token opens. */
  readonly server: string
  readonly expiresAt: Date
}

export class ConsoleTokens extends Context.Service<ConsoleTokens, {
  issue(grant: ConsoleGrant): Effect.Effect<string>
  /** None for a token that is malformed, forged, expired or of another kind (a session token is not one). */
  verify(token: string): Effect.Effect<Option.Option<ConsoleGrant>>
}>()("zh/ports/ConsoleTokens") {}
