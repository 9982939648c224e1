// The game server as billing sells it: its plans and settings, its five-step provisioning, and what its
// subscription's periods do to it (suspend, unsuspend, delete), registered as the product of kind "game".
import { Effect, Layer, Option } from "effect"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { registerProduct } from "../billing/registerProduct.ts"
import { inspectGame } from "./inspectGame.ts"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { termsOf } from "../catalog/Plan.ts"
import { releaseGame, removeGame, RestoreGame, restoreGame, SuspendGame, suspendGame, TerminateGame } from "./GameLifecycle.ts"
import { validateGameOptions } from "./GameOptions.ts"
import { hasRoomFor } from "./room.ts"
import { GAME_STEPS, ProvisionGame, ProvisionGameLive, UndoGameLive } from "./ProvisionGame.ts"

const plans = plansOf("game")

export const GameHosting = Layer.mergeAll(
  registerProduct({
    kind: "game",
    steps: GAME_STEPS,
    forSale: plans.forSale,
    plan: plans.terms,
    termsOf,
    checkOptions: validateGameOptions,
    // Steps 2 and 3 choose the node and port on the same figures (room.ts), and refund when the last went meanwhile.
    hasRoom: hasRoomFor,
    summary: (subscriptionId) =>
      Effect.map(
        Effect.flatMap(GameServerRecords, (records) => records.bySubscription(subscriptionId)),
        Option.map((server) => ({ name: server.name, address: server.status === "deleted" ? "" : server.address, state: server.status }))
      ),
    inspect: inspectGame,
    standing: (subscriptionId) =>
      Effect.map(
        Effect.flatMap(GameServerRecords, (records) => records.bySubscription(subscriptionId)),
        Option.map((server) => ({ suspended: server.status === "suspended", graceUntil: server.graceUntil }))
      ),
    suspend: suspendGame,
    bringBack: restoreGame,
    remove: removeGame,
    release: releaseGame,
    transient: (e) => e._tag === "GamePanelUnavailable" || e._tag === "GamePanelThrottled" || e._tag === "ServerStateConflict",
    provisioning: ProvisionGame,
    lapse: SuspendGame,
    restore: RestoreGame,
    termination: TerminateGame
  }),
  ProvisionGameLive,
  UndoGameLive
)
