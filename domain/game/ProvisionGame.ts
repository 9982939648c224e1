// The five-step game-server provisioning workflow (DESIGN §3): panel user → node → allocation → create server →
// installed. Each step is a durable, idempotent activity; a failure at any step refunds the charge and tells the
// customer why at once, then deletes what was made on the panel and gives the allocation back, retrying that undo
// until it succeeds.
import { Clock, Duration, Effect, Option, Schedule, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { Workflow } from "effect/workflow"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { GameAllocations } from "../../ports/GameAllocations.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import {
  pollDurably,
  provisioned,
  provisionedOrder,
  provisioningStep,
  provisioningWorkflow,
  reportStep,
  StepFailed,
  stepFailure,
  undoing
} from "../billing/provisioning.ts"
import { alert } from "../ops/alert.ts"
import { GameServer, GameServerId } from "./GameServer.ts"
import { SubscriptionId } from "../billing/Billing.ts"
import { moveOrder } from "../billing/orderMoves.ts"
import { checkEnvironment, GameOrderOptions } from "./GameOptions.ts"
import { GameSettings } from "./GameSettings.ts"
import { type Placing, placeServer, roomyNodes } from "./room.ts"
import { dieOnDatabaseOutage } from "../ops/dieOnDatabaseOutage.ts"

export const GAME_STEPS = [
  "Preparing your panel account",
  "Choosing a node",
  "Reserving an address and port",
  "Creating the server",
  "Installing the game"
] as const

export const ProvisionGame = provisioningWorkflow("ProvisionGame")

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The panel being down or throttling us may pass: such a step is tried again. */
const failed = stepFailure((e) => e._tag === "GamePanelUnavailable" || e._tag === "GamePanelThrottled")

const panelDown = "The game panel cannot be reached."

/** The order, its plan and the customer's variables, read again by every step. */
const context = (orderId: string) =>
  Effect.map(
    provisionedOrder(orderId, GameOrderOptions, { name: "game", planOf: plansOf("game").any }),
    ({ options, order, plan }) => ({ order, plan, variables: options.variables ?? {} })
  )

const progress = reportStep(GAME_STEPS)

/** The panel account is ours, not the customer's: a synthetic address and name, found again by our user id. */
export const panelUsername = (userId: string) => `zh_${userId.replace(/-/g, "").toLowerCase()}`

const step1User = (orderId: string) =>
  Effect.gen(function*() {
    yield* progress(orderId, 1)
    const { order, plan } = yield* context(orderId)
    const panel = yield* GamePanel
    const existing = yield* panel.userFor(plan.panel, order.userId)
    if (existing !== null) return existing.id
    const domain = (yield* GameSettings).panelUserDomain
    const created = yield* panel.createUser(plan.panel, {
      userId: order.userId,
      email: `${order.userId}@${domain}`,
      username: panelUsername(order.userId),
      firstName: "ZH",
      lastName: "Customer"
    })
    return created.id
  }).pipe(Effect.mapError((e) =>
    failed(1, e._tag === "PanelValidationFailed" ? "Your account could not be set up on the game panel." : panelDown)(e)
  ))

/** Public nodes out of maintenance with room for the plan by the panel's own figures, roomiest first (room.ts). */
const step2Nodes = (orderId: string) =>
  Effect.gen(function*() {
    yield* progress(orderId, 2)
    const { plan } = yield* context(orderId)
    const nodes = yield* (yield* GamePanel).nodes(plan.panel).pipe(Effect.mapError(failed(2, panelDown)))
    const candidates = roomyNodes(nodes, plan)
    if (candidates.length === 0) {
      return yield* new StepFailed({ step: 2, reason: "No game node has room for this plan right now.", detail: "no node fits" })
    }
    return candidates.map((n) => n.id)
  })

const Claimed = Schema.Struct({ node: Schema.Int, allocationId: Schema.Int, address: Schema.String })

/**
 * The first node (in step 2's order) that still has room once the other orders' claims count, and its first
 * allocation nobody holds: chosen under the panel-wide claim lock, so concurrent orders never share one.
 */
const step3Allocate = (orderId: string, candidates: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    yield* progress(orderId, 3)
    const { plan } = yield* context(orderId)
    const panel = yield* GamePanel
    const nodes = new Map((yield* panel.nodes(plan.panel)).map((n) => [n.id, n]))
    const free = yield* Effect.forEach(candidates, (id) =>
      Effect.map(panel.freeAllocations(plan.panel, id), (list) => [id, list] as const))
    // What the last `choose` decided (the claim's own call, under the lock), to tell a full node from no free port.
    const last: { placing: Placing } = { placing: { _tag: "NoRoom" } }
    const claim = yield* (yield* GameAllocations).claim(plan.panel, orderId, (claimed) => {
      const placing = placeServer(plan, nodes, free, claimed)
      last.placing = placing
      return placing._tag === "Chosen"
        ? Option.some({ node: placing.node, allocationId: placing.allocationId, memoryMiB: plan.memoryMiB, diskMiB: plan.diskMiB })
        : Option.none()
    })
    if (Option.isNone(claim)) {
      return yield* new StepFailed(
        last.placing._tag === "NoAddress"
          ? { step: 3, reason: "No game server address is free right now.", detail: "no free allocation" }
          : { step: 3, reason: "No game node has room for this plan right now.", detail: "no node has room once pending orders count" }
      )
    }
    const allocation = free.flatMap(([, list]) => list).find((a) => a.id === claim.value.allocationId)
    const host = allocation?.alias ?? allocation?.ip ?? ""
    return { node: claim.value.node, allocationId: claim.value.allocationId, address: `${host}:${allocation?.port ?? 0}` }
  }).pipe(Effect.catchTag(["GamePanelUnavailable", "GamePanelThrottled", "PanelUnknown"], (e) => Effect.fail(failed(3, panelDown)(e))))

const Created = Schema.Struct({ id: Schema.Int, uuid: Schema.String, identifier: Schema.String, createdAt: Schema.Number })

/** The server is made for our order: a retried step finds the server it made instead of making a second. */
const step4Create = (orderId: string, panelUser: number, claimed: typeof Claimed.Type) =>
  Effect.gen(function*() {
    yield* progress(orderId, 4)
    const { plan, variables } = yield* context(orderId)
    const panel = yield* GamePanel
    const allocations = yield* GameAllocations
    const existing = yield* panel.serverForOrder(plan.panel, orderId).pipe(Effect.mapError(failed(4, panelDown)))
    if (existing !== null) {
      yield* allocations.markCreated(orderId)
      return { id: existing.id, uuid: existing.uuid, identifier: existing.identifier, createdAt: yield* Clock.currentTimeMillis }
    }
    const egg = yield* panel.egg(plan.panel, plan.eggId).pipe(Effect.mapError(failed(4, panelDown)))
    if (!Object.values(egg.dockerImages).includes(plan.dockerImage)) {
      return yield* new StepFailed({
        step: 4,
        reason: "This plan is misconfigured; our team has been told.",
        detail: `docker image ${plan.dockerImage} is not one of egg ${egg.id}'s images`
      })
    }
    const { environment, problems } = checkEnvironment(egg, plan, variables)
    if (problems.length > 0) {
      return yield* new StepFailed({
        step: 4,
        reason: problems.some((p) => p.customer)
          ? `Your settings were refused: ${problems.map((p) => `${p.field} ${p.problem}`).join("; ")}.`
          : "This plan is misconfigured; our team has been told.",
        detail: problems.map((p) => `${p.field} ${p.problem}`).join("; ")
      })
    }
    const server = yield* panel.createServer(plan.panel, {
      name: `${plan.name} ${orderId.slice(0, 8)}`,
      orderId: orderId,
      user: panelUser,
      egg: plan.eggId,
      dockerImage: plan.dockerImage,
      startup: egg.startup,
      environment,
      limits: { memoryMiB: plan.memoryMiB, swapMiB: 0, diskMiB: plan.diskMiB, io: plan.io, cpuPercent: plan.cpuPercent },
      oomDisabled: true,
      featureLimits: { databases: plan.databases, backups: plan.backups, allocations: plan.allocations },
      allocation: claimed.allocationId,
      startOnCompletion: true
    }).pipe(Effect.mapError(failed(4, "The game panel refused to create the server.")))
    yield* allocations.markCreated(orderId)
    return { id: server.id, uuid: server.uuid, identifier: server.identifier, createdAt: yield* Clock.currentTimeMillis }
  })

/**
 * One look at the install: the panel's `status` (never `container.installed`, which cannot tell a failure), installed
 * or not yet (null), up to the install timeout counted from the creation (a resumed workflow keeps it).
 */
const step5Installed = (orderId: string, created: typeof Created.Type) =>
  Effect.gen(function*() {
    yield* progress(orderId, 5)
    const { plan } = yield* context(orderId)
    const settings = yield* GameSettings
    const server = yield* (yield* GamePanel).server(plan.panel, created.id).pipe(
      Effect.retry({ times: 5, schedule: Schedule.exponential("1 second"), while: (e) => e._tag !== "PanelResourceNotFound" }),
      Effect.mapError(failed(5, "The game server disappeared from the panel during its installation."))
    )
    if (server.state === "installed" || server.state === "reinstall_failed") return "installed" as const
    if (server.state === "install_failed") {
      return yield* new StepFailed({ step: 5, reason: "The game could not be installed.", detail: "install_failed" })
    }
    if (server.state === "suspended") {
      return yield* new StepFailed({ step: 5, reason: "The installation was interrupted.", detail: "suspended while installing" })
    }
    if ((yield* Clock.currentTimeMillis) >= created.createdAt + Duration.toMillis(settings.installTimeout)) {
      return yield* new StepFailed({
        step: 5,
        reason: "The game took too long to install.",
        detail: `still ${server.state} after ${Duration.format(settings.installTimeout)}`
      })
    }
    return null
  })

/** Installed: our record of the server, and the order completed. */
const step5Record = (orderId: string, created: typeof Created.Type, claimed: typeof Claimed.Type) =>
  Effect.gen(function*() {
    const { order, plan } = yield* context(orderId)
    const at = yield* now
    const record = yield* (yield* GameServerRecords).create(new GameServer({
      id: GameServerId.make(yield* (yield* SecureRandom.SecureRandom).uuidV4()),
      userId: order.userId,
      subscriptionId: order.subscriptionId ?? SubscriptionId.make(""),
      orderId: order.id,
      planId: order.planId,
      panel: plan.panel,
      panelServerId: created.id,
      uuid: created.uuid,
      identifier: created.identifier,
      name: plan.name,
      node: claimed.node,
      allocationId: claimed.allocationId,
      address: claimed.address,
      status: "active",
      graceUntil: null,
      createdAt: at,
      deletedAt: null
    }))
    if (order.subscriptionId !== null) yield* (yield* Subscriptions).attachService(order.subscriptionId, record.id)
    yield* moveOrder(orderId, { event: "provisioned", serviceId: record.id, oneTimeSecret: null }, at)
    return record.id
  })

/**
 * Undo, once: the panel server (found by its order, whatever step we reached; deleted only while it is still the one made
 * for it) and the allocation claim.
 */
const undo = (orderId: string) =>
  Effect.gen(function*() {
    const { plan } = yield* context(orderId)
    const panel = yield* GamePanel
    const server = yield* panel.serverForOrder(plan.panel, orderId)
    if (server !== null) {
      yield* panel.deleteOurServer(plan.panel, server.id, orderId).pipe(
        Effect.catchTag("PanelServerNotOurs", (e) =>
          alert(`refused to delete server ${e.id} on panel ${e.panel}: ${e.message}; left untouched for an operator`, { orderId }))
      )
    }
    yield* (yield* GameAllocations).release(orderId)
  })

/** The undo of a failed game order: what it made is found again on the panel by its order. */
export const UndoGame = Workflow.make("UndoProvisionGame", {
  payload: { orderId: Schema.String },
  idempotencyKey: ({ orderId }) => orderId
})

export const UndoGameLive = UndoGame.toLayer(Effect.fn(function*({ orderId }) {
  yield* undoing(orderId, undo(orderId))
}))

export const ProvisionGameLive = ProvisionGame.toLayer(Effect.fn(function*({ orderId }) {
  const build = Effect.gen(function*() {
    const user = yield* provisioningStep({ name: "user", success: Schema.Int, execute: step1User(orderId) })
    const nodes = yield* provisioningStep({ name: "nodes", success: Schema.Array(Schema.Int), execute: dieOnDatabaseOutage(step2Nodes(orderId)) })
    const claimed = yield* provisioningStep({ name: "allocate", success: Claimed, execute: dieOnDatabaseOutage(step3Allocate(orderId, nodes)) })
    const created = yield* provisioningStep({ name: "create", success: Created, execute: dieOnDatabaseOutage(step4Create(orderId, user, claimed)) })
    const settings = yield* GameSettings
    yield* pollDurably({
      name: "install",
      success: Schema.Literal("installed"),
      check: () => dieOnDatabaseOutage(step5Installed(orderId, created)),
      pauses: { initial: settings.installPollInitial, max: settings.installPollMax }
    })
    return yield* provisioningStep({ name: "record", success: Schema.String, execute: dieOnDatabaseOutage(step5Record(orderId, created, claimed)) })
  })
  return yield* provisioned(
    orderId,
    build,
    () => UndoGame.execute({ orderId }, { discard: true, detached: true }),
    // Players connect to its allocation's `host:port`.
    (serverId) =>
      Effect.map(Effect.flatMap(GameServerRecords, (records) => records.get(serverId)), Option.match({ onNone: () => "", onSome: (server) => server.address }))
  )
}))
