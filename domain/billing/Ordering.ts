// Placing an order: validate the options, charge, open the subscription, start the durable provisioning.
import { Clock, Effect, Option, Redacted, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { Catalog } from "../../ports/Catalog.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { refundOrder } from "./refund.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { planForSale } from "../catalog/listPlansForSale.ts"
import type { GamePlan, VpsPlan } from "../catalog/Plan.ts"
import { checkEnvironment, decodeGameOptions } from "../game/GameOptions.ts"
import { GAME_STEPS, ProvisionGame } from "../game/ProvisionGame.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import { ProvisionVps, VPS_STEPS } from "../vps/ProvisionVps.ts"
import { checkSshPublicKey, isValidHostname, normaliseSshPublicKey, VpsOrderOptions } from "../vps/VpsOptions.ts"
import { addMonth, type Order } from "./Billing.ts"
import { InvalidOrderOption, OrderNotFound, PlanUnavailable } from "./BillingErrors.ts"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const validateVpsOptions = Effect.fn("validateVpsOptions")(function*(plan: VpsPlan, raw: unknown) {
  const options = yield* Schema.decodeUnknownEffect(VpsOrderOptions)(raw).pipe(
    Effect.mapError((e) => new InvalidOrderOption({ field: "options", problem: e.message.split("\n")[0] ?? e.message }))
  )
  if (!plan.templates.includes(options.templateId)) {
    return yield* new InvalidOrderOption({ field: "options.templateId", problem: "this plan does not offer that OS template" })
  }
  if ((yield* (yield* Catalog).templates(options.templateId)).length === 0) {
    return yield* new InvalidOrderOption({ field: "options.templateId", problem: "that OS template is no longer offered" })
  }
  const hostname = options.hostname.trim().toLowerCase()
  if (!isValidHostname(hostname)) {
    return yield* new InvalidOrderOption({
      field: "options.hostname",
      problem: "letters, digits and hyphens, in labels of at most 63 characters separated by dots"
    })
  }
  const keyProblem = checkSshPublicKey(options.sshPublicKey)
  if (keyProblem !== undefined) return yield* new InvalidOrderOption({ field: "options.sshPublicKey", problem: keyProblem })
  return { templateId: options.templateId, hostname, sshPublicKey: normaliseSshPublicKey(options.sshPublicKey) }
})

/**
 * The customer's settings are checked against the plan and against the egg's own rules (read from the panel)
 * before anything is charged; the plan's own values are the operator's business (a misconfigured plan fails
 * its provisioning with a clear reason and a refund).
 */
const validateGameOptions = Effect.fn("validateGameOptions")(function*(plan: GamePlan, raw: unknown) {
  const options = yield* decodeGameOptions(plan, raw)
  if (Object.keys(options.variables).length === 0) return options
  const egg = yield* (yield* GamePanel).egg(plan.panel, plan.eggId).pipe(
    Effect.catchTag("PanelResourceNotFound", () => Effect.fail(new PlanUnavailable({ planId: plan.id })))
  )
  const problem = checkEnvironment(egg, plan, options.variables).problems.find((p) => p.customer)
  if (problem !== undefined) return yield* new InvalidOrderOption({ field: problem.field, problem: problem.problem })
  return options
})

/**
 * The order is paid before anything is built; a declined payment leaves a failed order and nothing else. The
 * provisioning runs durably after the answer (the customer follows it on the order).
 */
export const placeOrder = Effect.fn("placeOrder")(function*(userId: string, planId: string, rawOptions: unknown) {
  // A platform that cannot take payments refuses the order before anything of it exists.
  yield* (yield* PaymentGateway).ready
  const found = yield* planForSale(planId)
  if (Option.isNone(found)) return yield* new PlanUnavailable({ planId })
  const plan = found.value
  const options: Record<string, unknown> = plan.kind === "vps"
    ? yield* validateVpsOptions(plan, rawOptions)
    : yield* validateGameOptions(plan, rawOptions)
  const totalSteps = plan.kind === "vps" ? VPS_STEPS.length : GAME_STEPS.length

  const random = yield* SecureRandom.SecureRandom
  const orders = yield* Orders
  const orderId = yield* random.uuidV4()
  const at = yield* now
  yield* orders.create({ id: orderId, userId, planId, kind: plan.kind, options, totalSteps, now: at })

  const charge = yield* (yield* PaymentGateway).charge({
    customer: userId,
    amountCents: plan.priceCents,
    description: `${plan.name}, first month`,
    idempotencyKey: `order:${orderId}`
  }).pipe(Effect.tapError((e) => orders.fail(orderId, e.message, at)))

  const subscriptionId = yield* random.uuidV4()
  yield* (yield* Subscriptions).create({
    id: subscriptionId,
    userId,
    planId,
    kind: plan.kind,
    orderId,
    currentPeriodEnd: addMonth(at),
    now: at
  })
  yield* (yield* Ledger).record({
    id: yield* random.uuidV4(),
    userId,
    subscriptionId,
    orderId,
    kind: "charge",
    amountCents: plan.priceCents,
    reference: charge.reference,
    createdAt: at
  })
  yield* orders.progress(orderId, { status: "provisioning", step: 0, stepName: "Queued", subscriptionId, now: at })
  yield* provision(plan.kind, orderId)
  return Option.getOrThrow(yield* orders.get(orderId))
})

/** Starts (or joins: idempotent by order id) the durable provisioning of the order's kind. */
const provision = (kind: "vps" | "game", orderId: string) =>
  kind === "vps"
    ? ProvisionVps.execute({ orderId }, { discard: true })
    : ProvisionGame.execute({ orderId }, { discard: true })

export interface OrderView {
  readonly order: Order
  /** The VPS root password, on the owner's first read of a completed order only. */
  readonly rootPassword?: string
}

/** The owner's view of an order; anyone else gets OrderNotFound, as if it did not exist. */
export const viewOrder = Effect.fn("viewOrder")(function*(userId: string, orderId: string) {
  const orders = yield* Orders
  const found = yield* orders.get(orderId)
  if (Option.isNone(found) || found.value.userId !== userId) return yield* new OrderNotFound()
  const order = found.value
  if (order.status !== "completed") return { order } satisfies OrderView
  const secret = yield* orders.takeOneTimeSecret(orderId)
  if (Option.isNone(secret)) return { order } satisfies OrderView
  const password = yield* (yield* SecretBox).open(secret.value, `order:${orderId}:root-password`).pipe(Effect.orDie)
  return { order, rootPassword: Redacted.value(password) } satisfies OrderView
})

/**
 * At start: every order still unfinished gets its due. One that reached provisioning has its workflow executed
 * again (idempotent by order id: a running or finished workflow is joined, not restarted). One still `pending`
 * for minutes was charged, or about to be, when a process died before its subscription existed: refund, fail.
 */
export const reconcileOrders = Effect.gen(function*() {
  const orders = yield* Orders
  const at = yield* now
  for (const order of yield* orders.unfinished) {
    if (order.status === "provisioning") {
      yield* provision(order.kind, order.id)
    } else if (at.getTime() - order.updatedAt.getTime() > 5 * 60_000) {
      // Old enough that no live request is still paying for it (another instance may be mid-order).
      yield* refundOrder(order.id, "The order was interrupted before provisioning could start.")
    }
  }
})
