// The game-server rules an operator tunes; the app builds this from configuration.
import { Context, type Duration } from "effect"

export class GameSettings extends Context.Service<GameSettings, {
  /**
   * Panel users get `<id>@<this domain>`, never the customer's address: the panel e-mails its users links to its
   * own domain, which would reveal it. Default `users.zh.invalid` (a reserved name: the mail goes nowhere).
   */
  readonly panelUserDomain: string
  /** How long an install may take before the order fails and the half-built server is deleted. */
  readonly installTimeout: Duration.Duration
  /** First and longest wait between two install status reads. */
  readonly installPollInitial: Duration.Duration
  readonly installPollMax: Duration.Duration
  /** How long a lapsed (suspended) game server is kept before it is deleted. */
  readonly gracePeriod: Duration.Duration
  /** Lifetime of the console token `GET /api/client/servers/:id/websocket` hands out. */
  readonly consoleTokenLifetime: Duration.Duration
}>()("zh/domain/GameSettings") {}
