// A VPS as the hypervisor holds it now, for an operator beside our record: its power state, whether the VM there is
// still ours (our order's stamp), where it runs and how it is sized. A hypervisor that does not answer in time is
// "unreachable", never a failure of the page.
import { Effect, Option } from "effect"
import { inspectedWithin, type ServiceInspection } from "../billing/HostedService.ts"
import { Virtualization } from "../../ports/Virtualization.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { vmRefOf } from "./Lifecycle.ts"
import { ownership } from "./ownership.ts"

const GIB = 1024 ** 3
const MIB = 1024 ** 2

export const inspectVps = (subscriptionId: string) =>
  Effect.gen(function*() {
    const vps = yield* (yield* VpsRecords).bySubscription(subscriptionId)
    if (Option.isNone(vps)) return Option.none<ServiceInspection>()
    if (vps.value.status === "destroyed") {
      return Option.some<ServiceInspection>({ reachable: true, upstream: "proxmox", state: "destroyed", ownership: "gone", facts: [] })
    }
    const virtualization = yield* Virtualization
    const live = Effect.gen(function*() {
      const { owner, vm } = yield* ownership(vmRefOf(vps.value), vps.value.orderId)
      const facts: Array<readonly [string, string]> = [["cluster", vm.cluster], ["node", vm.node], ["vmid", String(vm.vmid)]]
      if (owner === "gone") return { reachable: true, upstream: "proxmox", state: "missing", ownership: "gone", facts } as const
      const status = yield* virtualization.status(vm)
      const listed = (yield* virtualization.listVms(vm.cluster)).find((v) => v.vmid === vm.vmid && v.node === vm.node)
      if (listed !== undefined) {
        facts.push(
          ["name", listed.name],
          ["vcpu", String(listed.cpus)],
          ["memoryMiB", String(Math.round(listed.memoryBytes / MIB))],
          ["diskGiB", String(Math.round(listed.diskBytes / GIB))]
        )
      }
      facts.push(["busy", String(status.busy)], ["guestAgent", String(status.agentEnabled)])
      return {
        reachable: true,
        upstream: "proxmox",
        state: status.status,
        ownership: owner === "ours" ? "ours" : "foreign",
        facts
      } as const
    })
    return Option.some(yield* inspectedWithin("proxmox", live))
  })
