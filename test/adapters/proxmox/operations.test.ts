// The guest agent, snapshots and the cluster-wide views, specified against a scripted PVE on loopback: what each
// operation sends and how PVE's loosely typed answers are read (reference/proxmox.md §2.1, §3, §6).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { base, replyTask, scenario, vm } from "./stubPve.ts"

describe("guest agent", () => {
  it.live("guestExec repeats the command key and polls until the process exited", () =>
    scenario(
      (stub) => {
        stub.route(`POST ${base}/agent/exec`, () => ({ data: { pid: "77" } }))
        stub.route(`GET ${base}/agent/exec-status`, (_, attempt) => ({
          data: attempt < 2 ? { exited: 0 } : { exited: "1", exitcode: 3, "out-data": "done\n", "err-data": "warn\n" }
        }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          const result = yield* v.guestExec(vm, ["sh", "-c", "echo done; exit 3"], "input")
          assert.deepStrictEqual(result, { exitCode: 3, stdout: "done\n", stderr: "warn\n" })
          const [exec] = stub.calls(`POST ${base}/agent/exec`)
          assert.deepStrictEqual(exec?.form.getAll("command"), ["sh", "-c", "echo done; exit 3"])
          assert.strictEqual(exec?.form.get("input-data"), "input")
          assert.strictEqual(stub.calls(`GET ${base}/agent/exec-status`)[0]?.query.get("pid"), "77")
        })
    ))

  it.live("an agent that is not configured or not running is GuestAgentUnavailable", () =>
    scenario(
      (stub) => {
        stub.route(`POST ${base}/agent/exec`, () => ({ status: 500, message: "QEMU guest agent is not running" }))
        stub.route(`POST ${base}/agent/set-user-password`, () => ({ status: 500, message: "No QEMU guest agent configured" }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* Effect.flip(v.guestExec(vm, ["true"])))._tag, "GuestAgentUnavailable")
          assert.strictEqual((yield* Effect.flip(v.setGuestPassword(vm, "root", Redacted.make("pw"))))._tag, "GuestAgentUnavailable")
          assert.strictEqual(stub.calls(`POST ${base}/agent/exec`).length, 1)
        })
    ))

  it.live("setGuestPassword and setCloudInitPassword send the password to the right call", () =>
    scenario(
      (stub) => {
        stub.route(`POST ${base}/agent/set-user-password`, () => ({ data: { result: {} } }))
        replyTask(stub, `POST ${base}/config`, { type: "qmconfig" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.setGuestPassword(vm, "root", Redacted.make("Guest-pw-1"))
          yield* v.setCloudInitPassword(vm, Redacted.make("Ci-pw-2"))
          const [agent] = stub.calls(`POST ${base}/agent/set-user-password`)
          assert.deepStrictEqual(Object.fromEntries(agent?.form ?? []), { username: "root", password: "Guest-pw-1" })
          assert.deepStrictEqual(Object.fromEntries(stub.calls(`POST ${base}/config`)[0]?.form ?? []), { cipassword: "Ci-pw-2" })
        })
    ))
})

describe("snapshots", () => {
  it.live("lists snapshots without the 'current' pseudo entry", () =>
    scenario(
      (stub) =>
        stub.route(`GET ${base}/snapshot`, () => ({
          data: [
            { name: "nightly", description: "auto", snaptime: "1717000000" },
            { name: "taking", description: "" },
            { name: "current", description: "You are here!", running: 1 }
          ]
        })),
      (v) =>
        Effect.map(v.listSnapshots(vm), (list) =>
          assert.deepStrictEqual(list, [
            { name: "nightly", description: "auto", createdAt: new Date(1_717_000_000_000) },
            { name: "taking", description: "", createdAt: null }
          ]))
    ))

  it.live("creates and deletes snapshots through their tasks", () =>
    scenario(
      (stub) => {
        replyTask(stub, `POST ${base}/snapshot`, { type: "qmsnapshot" })
        replyTask(stub, `DELETE ${base}/snapshot/before-upgrade`, { type: "qmdelsnapshot" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.createSnapshot(vm, "before-upgrade", "safety net")
          yield* v.deleteSnapshot(vm, "before-upgrade")
          assert.deepStrictEqual(Object.fromEntries(stub.calls(`POST ${base}/snapshot`)[0]?.form ?? []), {
            snapname: "before-upgrade",
            description: "safety net"
          })
          assert.strictEqual(stub.calls(`DELETE ${base}/snapshot/before-upgrade`).length, 1)
        })
    ))

  it.live("a snapshot whose answer was lost is looked for before it is taken again", () =>
    scenario(
      (stub) => {
        stub.route(`POST ${base}/snapshot`, () => ({ status: 596, reason: "Connection timed out" }))
        stub.route(`GET ${base}/snapshot`, () => ({ data: [{ name: "before-upgrade", description: "" }, { name: "current" }] }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.createSnapshot(vm, "before-upgrade", "")
          assert.strictEqual(stub.calls(`POST ${base}/snapshot`).length, 1)
        })
    ))
})

describe("cluster views", () => {
  it.live("listVms keeps QEMU VMs only and reads numbers and booleans however PVE wrote them", () =>
    scenario(
      (stub) =>
        stub.route("GET /cluster/resources", (request) => {
          assert.strictEqual(request.query.get("type"), "vm")
          return {
            data: [
              { type: "qemu", id: "qemu/101", vmid: "101", node: "pve1", name: "web-1", status: "running", template: 0, maxcpu: "2", maxmem: 2147483648, maxdisk: "21474836480", lock: "", tags: "zh;zh-order-o-101" },
              { type: "qemu", id: "qemu/9000", vmid: 9000, node: "pve1", name: "debian-12", status: "stopped", template: "1", maxcpu: 1, maxmem: 1073741824, maxdisk: 2147483648 },
              { type: "qemu", id: "qemu/102", vmid: 102, node: "pve2", status: "unknown" },
              { type: "lxc", id: "lxc/200", vmid: 200, node: "pve1", name: "ct", status: "running" }
            ]
          }
        }),
      (v) =>
        Effect.map(v.listVms("c1"), (vms) =>
          assert.deepStrictEqual(vms, [
            { cluster: "c1", node: "pve1", vmid: 101, name: "web-1", stamp: "o-101", createdFor: null, managed: true, status: "running", template: false, busy: false, cpus: 2, memoryBytes: 2147483648, diskBytes: 21474836480 },
            { cluster: "c1", node: "pve1", vmid: 9000, name: "debian-12", stamp: null, createdFor: null, managed: false, status: "stopped", template: true, busy: false, cpus: 1, memoryBytes: 1073741824, diskBytes: 2147483648 },
            { cluster: "c1", node: "pve2", vmid: 102, name: "", stamp: null, createdFor: null, managed: true, status: "unknown", template: false, busy: false, cpus: 0, memoryBytes: 0, diskBytes: 0 }
          ]))
    ))

  it.live("nodeCapacity commits non-template VMs per node and reads the target storage, not the root disk", () =>
    scenario(
      (stub) =>
        stub.route("GET /cluster/resources", (request) => {
          const type = request.query.get("type")
          if (type === "node") {
            return {
              data: [
                { type: "node", node: "pve1", status: "online", maxcpu: 16, maxmem: "68719476736", disk: 1, maxdisk: 2 },
                { type: "node", node: "pve2", status: "offline" }
              ]
            }
          }
          if (type === "vm") {
            return {
              data: [
                { type: "qemu", vmid: 101, node: "pve1", maxcpu: 2, maxmem: 2147483648, status: "stopped", template: 0 },
                { type: "qemu", vmid: 102, node: "pve1", maxcpu: "4", maxmem: "4294967296", status: "running" },
                { type: "qemu", vmid: 9000, node: "pve1", maxcpu: 8, maxmem: 8589934592, template: 1 },
                { type: "lxc", vmid: 200, node: "pve1", maxcpu: 8, maxmem: 8589934592 },
                { type: "qemu", vmid: 103, node: "pve2", maxcpu: 1, maxmem: 1073741824 }
              ]
            }
          }
          return {
            data: [
              { type: "storage", storage: "local-lvm", node: "pve1", status: "available", disk: "100", maxdisk: 1000 },
              { type: "storage", storage: "local", node: "pve1", status: "available", disk: 0, maxdisk: 5 },
              { type: "storage", storage: "local-lvm", node: "pve2", status: "unknown", disk: 0, maxdisk: 1000 }
            ]
          }
        }),
      (v) =>
        Effect.map(v.nodeCapacity("c1", "local-lvm"), (nodes) =>
          assert.deepStrictEqual(nodes, [
            {
              node: "pve1",
              online: true,
              cpus: 16,
              memoryBytes: 68719476736,
              committedCpus: 6,
              committedMemoryBytes: 6442450944,
              storage: { availableBytes: 900, totalBytes: 1000 }
            },
            { node: "pve2", online: false, cpus: 0, memoryBytes: 0, committedCpus: 1, committedMemoryBytes: 1073741824, storage: null }
          ]))
    ))
})
