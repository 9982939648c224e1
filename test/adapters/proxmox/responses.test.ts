// How the wrapper reads PVE's loosely typed answers (reference/proxmox.md §2.1, §3.1): numbers as strings, booleans as
// 0/1/"1", absent fields, and `/cluster/resources?type=vm` listing containers beside QEMU VMs. The simulated PVE
// writes one typing and has no containers, so these are read straight through the schemas.
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { qemuOf, Resources, SnapshotEntry, VmCurrentStatus } from "../../../adapters/proxmox/responses.ts"

describe("PVE's answers, decoded leniently", () => {
  it("resources read numbers and booleans however PVE wrote them, and qemuOf keeps QEMU VMs only", () => {
    const decoded = Schema.decodeUnknownSync(Resources)([
      { type: "qemu", vmid: "101", node: "pve1", template: 0, maxcpu: "2", maxmem: 2147483648, maxdisk: "21474836480", lock: "" },
      { type: "qemu", vmid: 9000, node: "pve1", template: "1", maxcpu: 1 },
      { type: "qemu", vmid: 102, node: "pve2", status: "unknown" },
      { type: "lxc", vmid: 200, node: "pve1", status: "running" },
      { type: "node", node: "pve2", status: "offline" }
    ])
    assert.deepStrictEqual(qemuOf(decoded).map((r) => [r.vmid, r.template ?? null, r.maxcpu ?? null, r.maxdisk ?? null]), [
      [101, false, 2, 21474836480],
      [9000, true, 1, null],
      [102, null, null, null]
    ])
  })

  it("a VM's status and snapshots take strings and 0/1 alike", () => {
    assert.deepInclude(Schema.decodeUnknownSync(VmCurrentStatus)({ status: "running", lock: "snapshot", agent: 0, vmid: "101" }), {
      status: "running",
      lock: "snapshot",
      agent: false
    })
    assert.deepInclude(Schema.decodeUnknownSync(SnapshotEntry)({ name: "nightly", description: "auto", snaptime: "1717000000" }), {
      snaptime: 1_717_000_000
    })
  })
})
