// Where a VPS of a plan can go: the nodes holding a copy of its OS template that an address pool reaches, their figures,
// and the machines already counted in them. Step 1 of the provisioning reserves on it; an order is refused before
// anything is charged when it shows no room at all.
import { Effect, Option } from "effect"
import { Catalog } from "../../ports/Catalog.ts"
import { Placement } from "../../ports/Placement.ts"
import { Virtualization } from "../../ports/Virtualization.ts"
import type { OsTemplate, VpsPlan } from "../catalog/Plan.ts"
import { chooseNode, type PlacementRequest } from "./placement.ts"
import type { Reservation } from "./Vps.ts"
import { VpsSettings } from "./VpsSettings.ts"

/** The template's copies on its cluster whose node an active address pool reaches (undefined: not offered any more). */
export const usableCopies = (templateId: string) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const [templates, pools] = yield* Effect.all([catalog.templates(templateId), catalog.ipPools], { concurrency: 2 })
    const first = templates[0]
    if (first === undefined) return undefined
    const cluster = first.cluster
    const reachable = (node: string) => pools.some((p) => !p.retired && p.cluster === cluster && p.nodes.includes(node))
    return { cluster, copies: templates.filter((t): t is OsTemplate => t.cluster === cluster && reachable(t.node)) }
  })

/** The cluster's nodes as the hypervisor reports them, and the orders whose machines already count in them. */
export const nodesOf = (cluster: string) =>
  Effect.gen(function*() {
    const virtualization = yield* Virtualization
    const [capacity, vms] = yield* Effect.all([
      virtualization.nodeCapacity(cluster, (yield* VpsSettings).storage),
      virtualization.listVms(cluster)
    ], { concurrency: 2 })
    // A reservation whose machine exists already counts in its node's own figures.
    const counted = new Set(vms.flatMap((vm) => vm.createdFor === null ? [] : [vm.createdFor]))
    return { capacity, counted }
  })

export const requestOf = (plan: VpsPlan): PlacementRequest => ({ cpus: plan.vcpu, memoryMiB: plan.ramMiB, diskGiB: plan.diskGiB })

/** The node chosen for `plan` among the template's usable copies, given the reservations pending on the cluster. */
export const chooseFor = (
  plan: VpsPlan,
  copies: ReadonlyArray<OsTemplate>,
  nodes: Effect.Success<ReturnType<typeof nodesOf>>,
  policy: VpsSettings["Service"]
) =>
(pending: ReadonlyArray<Reservation>) =>
  chooseNode({ ...nodes, allowed: copies.map((t) => t.node), pending, request: requestOf(plan), policy })

/**
 * Whether a VPS of `plan` with this template fits somewhere now, reservations of orders under way counted. A cluster
 * that cannot be asked answers yes: the provisioning decides then (and refunds when it must).
 */
export const hasRoomFor = (plan: VpsPlan, options: { readonly templateId: string }) =>
  Effect.gen(function*() {
    const usable = yield* usableCopies(options.templateId)
    if (usable === undefined) return true
    const nodes = yield* nodesOf(usable.cluster).pipe(Effect.option)
    if (Option.isNone(nodes)) return true
    const pending = yield* (yield* Placement).pending(usable.cluster)
    return Option.isSome(chooseFor(plan, usable.copies, nodes.value, yield* VpsSettings)(pending))
  })
