// Where a game server of a plan can go: the panel's public nodes out of maintenance with room for it by the panel's own
// figures, the claims of orders under way counted, and an allocation (IP:port) nobody holds there. Steps 2 and 3 of
// the provisioning choose on it; an order is refused before anything is charged when it shows no room at all.
import { Effect } from "effect"
import { GameAllocations } from "../../ports/GameAllocations.ts"
import { GamePanel, type PanelAllocation, type PanelNode } from "../../ports/GamePanel.ts"
import type { GamePlan } from "../catalog/Plan.ts"
import type { AllocationClaim } from "./GameServer.ts"

/** What a server of a plan takes of its node. */
export type ServerSize = Pick<GamePlan, "memoryMiB" | "diskMiB">

/**
 * Whether a server of `size` fits on `node` by the panel's figures (its overallocation allowed), with the claims of
 * orders under way on it whose server does not exist yet (a created one counts in the node's own figures).
 */
const fits = (node: PanelNode, size: ServerSize, claimed: ReadonlyArray<AllocationClaim>) => {
  const pending = claimed.filter((c) => c.node === node.id && !c.created)
  const pendingMemory = pending.reduce((sum, c) => sum + c.memoryMiB, 0)
  const pendingDisk = pending.reduce((sum, c) => sum + c.diskMiB, 0)
  const limit = (total: number, overallocate: number) => overallocate < 0 ? Infinity : total * (1 + overallocate / 100)
  return node.allocatedMemoryMiB + pendingMemory + size.memoryMiB <= limit(node.memoryMiB, node.memoryOverallocate) &&
    node.allocatedDiskMiB + pendingDisk + size.diskMiB <= limit(node.diskMiB, node.diskOverallocate)
}

/** Public nodes out of maintenance with room for a server of `size` by the panel's own figures, roomiest first. */
export const roomyNodes = (nodes: ReadonlyArray<PanelNode>, size: ServerSize): ReadonlyArray<PanelNode> =>
  nodes
    .filter((n) => n.public && !n.maintenance && fits(n, size, []))
    .sort((a, b) => (b.memoryMiB - b.allocatedMemoryMiB) - (a.memoryMiB - a.allocatedMemoryMiB))

/** Where a server goes: a node and one of its allocations; or why nowhere. */
export type Placing =
  | { readonly _tag: "Chosen"; readonly node: number; readonly allocationId: number }
  /** Some node has room, but every allocation on such nodes is held. */
  | { readonly _tag: "NoAddress" }
  /** No node has room once the claims of orders under way count. */
  | { readonly _tag: "NoRoom" }

/**
 * The first node of `free` (in its order) that still has room for a server of `size` once `claimed` counts, and its
 * first allocation no claim holds.
 */
export const placeServer = (
  size: ServerSize,
  nodes: ReadonlyMap<number, PanelNode>,
  free: ReadonlyArray<readonly [number, ReadonlyArray<PanelAllocation>]>,
  claimed: ReadonlyArray<AllocationClaim>
): Placing => {
  const held = new Set(claimed.map((c) => c.allocationId))
  let roomy = false
  for (const [id, allocations] of free) {
    const node = nodes.get(id)
    if (node === undefined || !fits(node, size, claimed)) continue
    roomy = true
    const allocation = allocations.find((a) => !held.has(a.id))
    if (allocation !== undefined) return { _tag: "Chosen", node: id, allocationId: allocation.id }
  }
  return roomy ? { _tag: "NoAddress" } : { _tag: "NoRoom" }
}

/** How long an order waits for the panel's figures before it is taken without them. */
export const ROOM_CHECK_TIMEOUT = "5 seconds"

/**
 * Whether a server of `plan` fits on its panel now, the claims of orders under way counted: the panel's (cached) node
 * list, then the free allocations of its roomy nodes, roomiest first, until one places it (one call in the usual
 * case). A panel that cannot be asked (down, throttling, or silent for ROOM_CHECK_TIMEOUT) answers yes: the
 * provisioning decides then, and refunds when it must (an unreachable panel never stops sales, nor holds an order up).
 */
export const hasRoomFor = (plan: GamePlan) =>
  Effect.gen(function*() {
    const claimed = yield* (yield* GameAllocations).onPanel(plan.panel)
    const panel = yield* GamePanel
    return yield* Effect.gen(function*() {
      const nodes = yield* panel.nodes(plan.panel)
      const byId = new Map(nodes.map((n) => [n.id, n]))
      for (const node of roomyNodes(nodes, plan)) {
        if (!fits(node, plan, claimed)) continue
        const free = yield* panel.freeAllocations(plan.panel, node.id)
        if (placeServer(plan, byId, [[node.id, free]], claimed)._tag === "Chosen") return true
      }
      return false
    }).pipe(
      Effect.timeout(ROOM_CHECK_TIMEOUT),
      Effect.catch((e) =>
        Effect.as(Effect.logWarning(`panel ${plan.panel} could not tell whether plan ${plan.id} has room (${e._tag}); taking the order`), true)
      )
    )
  })
