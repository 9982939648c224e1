// Choosing a node: remaining capacity against overcommit limits, counting reservations not yet visible upstream.
import { Option } from "effect"
import type { NodeCapacity } from "../../ports/Virtualization.ts"
import type { Reservation } from "./Vps.ts"

const GiB = 1024 ** 3
const MiB = 1024 ** 2

export interface PlacementRequest {
  readonly cpus: number
  readonly memoryMiB: number
  readonly diskGiB: number
}

export interface PlacementPolicy {
  readonly cpuOvercommit: number
  readonly memoryOvercommit: number
  readonly storageMarginGiB: number
}

/**
 * The node with the most memory left after placing the request, among `allowed` nodes that are online, have
 * the storage, and stay within the limits. A reservation whose order's machine already exists upstream (`counted`)
 * is not counted again: the node's own figures include it.
 */
export const chooseNode = (options: {
  readonly capacity: ReadonlyArray<NodeCapacity>
  readonly allowed: ReadonlyArray<string>
  /** The orders whose machines exist upstream. */
  readonly counted: ReadonlySet<string>
  readonly pending: ReadonlyArray<Reservation>
  readonly request: PlacementRequest
  readonly policy: PlacementPolicy
}): Option.Option<{ readonly node: string; readonly cpus: number; readonly memoryMiB: number; readonly diskGiB: number }> => {
  const { policy, request } = options
  let best: { readonly node: string; readonly freeMemory: number; readonly committedCpus: number } | undefined
  for (const node of options.capacity) {
    if (!node.online || node.storage === null || !options.allowed.includes(node.node)) continue
    const pending = options.pending.filter((r) => r.node === node.node && !options.counted.has(r.holder))
    const cpus = node.committedCpus + pending.reduce((n, r) => n + r.cpus, 0) + request.cpus
    const memory = node.committedMemoryBytes + pending.reduce((n, r) => n + r.memoryMiB * MiB, 0) + request.memoryMiB * MiB
    const disk = pending.reduce((n, r) => n + r.diskGiB * GiB, 0) + (request.diskGiB + policy.storageMarginGiB) * GiB
    if (cpus > node.cpus * policy.cpuOvercommit) continue
    if (memory > node.memoryBytes * policy.memoryOvercommit) continue
    if (disk > node.storage.availableBytes) continue
    const freeMemory = node.memoryBytes * policy.memoryOvercommit - memory
    if (best === undefined || freeMemory > best.freeMemory || (freeMemory === best.freeMemory && cpus < best.committedCpus)) {
      best = { node: node.node, freeMemory, committedCpus: cpus }
    }
  }
  return best === undefined
    ? Option.none()
    : Option.some({ node: best.node, cpus: request.cpus, memoryMiB: request.memoryMiB, diskGiB: request.diskGiB })
}
