// The guest agent, snapshots and the cluster-wide views, specified against the simulated PVE in memory: what each
// operation sends and how PVE's answers are read (reference/proxmox.md §2.1, §3, §6).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { base, placeAt, scenario, vm } from "./simulatedPve.ts"

const GiB = 1024 ** 3
const TiB = 1024 ** 4

describe("guest agent", () => {
  it.live("guestExec repeats the command key, sends stdin and polls until the process exited", () =>
    scenario(
      (pve) => placeAt(pve, { name: "web-1", status: "running", config: { agent: "1" } }),
      (v, pve) =>
        Effect.gen(function*() {
          const failing = yield* v.guestExec(vm, ["sh", "-c", "cat /etc/hostname /nonexistent"])
          assert.deepStrictEqual(failing, { exitCode: 1, stdout: "web-1\n", stderr: "cat: /nonexistent: No such file or directory\n" })
          assert.deepStrictEqual(yield* v.guestExec(vm, ["cat"], "input"), { exitCode: 0, stdout: "input", stderr: "" })
          const [first, second] = pve.calls(`POST ${base}/agent/exec`)
          assert.deepStrictEqual(first?.body["command"], ["sh", "-c", "cat /etc/hostname /nonexistent"])
          assert.deepStrictEqual(second?.body["command"], "cat")
          assert.strictEqual(second?.body["input-data"], "input")
          // The pid each exec answered is the one its status is read with.
          const statuses = pve.calls(`GET ${base}/agent/exec-status`)
          assert.strictEqual(statuses.length, 2)
          assert.notStrictEqual(statuses[0]?.query["pid"], statuses[1]?.query["pid"])
        })
    ))

  it.live("an agent that is not configured or not running is GuestAgentUnavailable", () =>
    scenario(
      (pve) => {
        placeAt(pve, { status: "running", config: { agent: "1" } })
        pve.control.setAgentRunning(vm.vmid, false)
        placeAt(pve, { vmid: 102, status: "running" })
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* Effect.flip(v.guestExec(vm, ["true"])))._tag, "GuestAgentUnavailable")
          const unconfigured = { ...vm, vmid: 102 }
          assert.strictEqual((yield* Effect.flip(v.setGuestPassword(unconfigured, "root", Redacted.make("Guest-pw-1"))))._tag, "GuestAgentUnavailable")
          // Not a transient failure: asked once.
          assert.strictEqual(pve.calls(`POST ${base}/agent/exec`).length, 1)
        })
    ))

  it.live("setGuestPassword and setCloudInitPassword send the password to the right call", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running", config: { agent: "1" } }),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.setGuestPassword(vm, "root", Redacted.make("Guest-pw-1"))
          yield* v.setCloudInitPassword(vm, Redacted.make("Ci-pw-2"))
          const [agent] = pve.calls(`POST ${base}/agent/set-user-password`)
          assert.deepStrictEqual(agent?.body, { username: "root", password: "Guest-pw-1" })
          assert.deepStrictEqual(pve.calls(`POST ${base}/config`)[0]?.body, { cipassword: "Ci-pw-2" })
          assert.strictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.config["cipassword"], "Ci-pw-2")
        })
    ))
})

describe("snapshots", () => {
  it.live("creates, lists (without the 'current' pseudo entry) and deletes snapshots through their tasks", () =>
    scenario(
      (pve) => placeAt(pve),
      (v, pve) =>
        Effect.gen(function*() {
          const before = Math.floor(pve.control.now() / 1000) * 1000
          yield* v.createSnapshot(vm, "before-upgrade", "safety net")
          assert.deepStrictEqual(pve.calls(`POST ${base}/snapshot`)[0]?.body, { snapname: "before-upgrade", description: "safety net" })
          const [listed, ...others] = yield* v.listSnapshots(vm)
          assert.deepStrictEqual(others, [])
          assert.deepInclude(listed, { name: "before-upgrade", description: "safety net" })
          assert.isAtLeast(listed?.createdAt?.getTime() ?? 0, before)
          assert.isAtMost(listed?.createdAt?.getTime() ?? Infinity, pve.control.now())
          yield* v.deleteSnapshot(vm, "before-upgrade")
          assert.strictEqual(pve.calls(`DELETE ${base}/snapshot/before-upgrade`).length, 1)
          assert.deepStrictEqual(yield* v.listSnapshots(vm), [])
        })
    ))

  it.live("a snapshot whose answer was lost is looked for before it is taken again", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({ match: { method: "POST", path: /\/snapshot$/ }, kind: { _tag: "answerLost", status: 596, message: "Connection timed out" } })
      },
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.createSnapshot(vm, "before-upgrade", "")
          assert.strictEqual(pve.calls(`POST ${base}/snapshot`).length, 1)
          assert.isNotEmpty(pve.calls(`GET ${base}/snapshot`))
          assert.deepStrictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.snapshots.map((s) => s.name), ["before-upgrade"])
        }),
      {},
      // Taken before the answer leaves: the sandbox lists a snapshot only once its task is done.
      { taskDurations: { default: 20, qmsnapshot: 0 } }
    ))
})

describe("cluster views", () => {
  it.live("listVms lists every QEMU VM with its stamp, state and sizes", () =>
    scenario(
      (pve) => {
        placeAt(pve, { status: "running", config: { tags: "zh;zh-order-o-101" } })
        placeAt(pve, { vmid: 102, node: "pve2", name: "by-hand" })
      },
      (v, pve) =>
        Effect.gen(function*() {
          const vms = yield* v.listVms("c1")
          assert.deepStrictEqual(pve.calls("GET /cluster/resources")[0]?.query, { type: "vm" })
          assert.deepStrictEqual(vms.map((x) => x.vmid).sort(), [101, 102, 9000, 9001, 9100, 9101])
          assert.deepStrictEqual(vms.find((x) => x.vmid === 101), {
            cluster: "c1", node: "pve1", vmid: 101, name: "web-1", stamp: "o-101", createdFor: null, managed: true,
            status: "running", template: false, busy: false, cpus: 2, memoryBytes: 2 * GiB, diskBytes: 10 * GiB
          })
          assert.deepInclude(vms.find((x) => x.vmid === 102), { node: "pve2", name: "by-hand", stamp: null, status: "stopped", template: false })
          assert.deepInclude(vms.find((x) => x.vmid === 9000), { name: "debian-12", stamp: null, managed: false, template: true })
        })
    ))

  it.live("nodeCapacity commits non-template VMs per node and reads the target storage", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        placeAt(pve, { vmid: 102, status: "running" })
        placeAt(pve, { vmid: 103, node: "pve2" })
      },
      (v) =>
        Effect.map(v.nodeCapacity("c1", "local-lvm"), (nodes) => {
          // Templates take disk (two 10 GiB templates per node) but commit no CPU or memory.
          const node = (name: string, vms: number) => ({
            node: name,
            online: true,
            cpus: 16,
            memoryBytes: 64 * GiB,
            committedCpus: 2 * vms,
            committedMemoryBytes: 2 * GiB * vms,
            storage: { availableBytes: 2 * TiB - (20 + 10 * vms) * GiB, totalBytes: 2 * TiB }
          })
          assert.deepStrictEqual(nodes, [node("pve1", 2), node("pve2", 1)])
        })
    ))
})
