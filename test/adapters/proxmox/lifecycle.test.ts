// The provisioning and end-of-life calls of a VPS, specified against the simulated PVE in memory: the template clone
// and its VMID races, cloud-init configuration with PVE's encodings, power, and destruction (reference/proxmox.md §3,
// §5).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { type MachineCreation, Virtualization } from "../../../ports/Virtualization.ts"
import { adapterLayer, base, cloudInit, clusterAt, inMemory, type Pve, placeAt, scenario, template, vm } from "./simulatedPve.ts"

const GiB = 1024 ** 3
const vmOf = (pve: Pve, vmid = vm.vmid) => pve.control.state().vms.find((x) => x.vmid === vmid)
const description = (order: string) => `Managed by ZH hosting for one customer's VPS: do not edit, move or delete it here.\nzh-order: ${order}`

describe("createMachine", () => {
  const create = (v: Virtualization["Service"], order = "o-101") =>
    v.createMachine(order, { cluster: "c1", node: "pve1", template, name: "vps-101", storage: "local-lvm" })
  const clonePath = "POST /nodes/pve1/qemu/9000/clone"
  const clone = /\/qemu\/9000\/clone$/
  const created = (vmid: number): MachineCreation => ({ _tag: "Created", vm: { cluster: "c1", node: "pve1", vmid } })
  const someoneElses = (pve: Pve, vmid: number, node = "pve1") => placeAt(pve, { vmid, node, name: `other-${vmid}` })

  it.live("clones the template into the first VMID of our range, to the target storage, with our stamp in its description", () =>
    scenario(
      () => undefined,
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          const [sent] = pve.calls(clonePath)
          assert.deepStrictEqual(sent?.body, { newid: "101", name: "vps-101", full: "1", storage: "local-lvm", description: description("o-101") })
          assert.deepStrictEqual(pve.calls("GET /cluster/nextid")[0]?.query, { vmid: "101" })
          assert.deepInclude(vmOf(pve), { node: "pve1", name: "vps-101", lock: null, diskBytes: 10 * GiB })
          assert.strictEqual(vmOf(pve)?.config["description"], description("o-101"))
        })
    ))

  it.live("asked again for the same order, answers the machine made (our stamp at its VMID) without cloning again", () =>
    scenario(
      () => undefined,
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.strictEqual(pve.calls(clonePath).length, 1)
        })
    ))

  it.live("a clone of ours still running at its VMID (a process stopped in its middle) is a creation in progress", () =>
    scenario(
      // What PVE holds while a clone runs: the new VM, locked `clone`, with the description it was given (§3.4).
      (pve) => placeAt(pve, { name: "vps-101", config: { description: "zh-order: o-101", lock: "clone" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), { _tag: "InProgress" })
          assert.strictEqual(pve.calls(clonePath).length, 0)
        })
    ))

  it.live("a VMID something else holds (on the node, or anywhere per nextid) is set aside and the next one used", () =>
    scenario(
      (pve) => {
        someoneElses(pve, 101)
        someoneElses(pve, 102, "pve2")
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(103))
          // Set aside for good: another order starts past them.
          assert.deepStrictEqual(yield* create(v, "o-104"), created(104))
          assert.deepStrictEqual(pve.calls(clonePath).map((c) => c.body["newid"]), ["103", "104"])
          assert.deepStrictEqual(pve.calls("GET /cluster/nextid").map((c) => c.query["vmid"]), ["102", "103", "104"])
        })
    ))

  it.live("'already exists' at the clone, at once or in the task, sets the VMID aside and takes the next one", () =>
    scenario(
      (pve) => {
        // Another tool took the VMID between our check and our clone: refused before the worker, or by it (§5.5).
        pve.control.inject({
          match: { method: "POST", path: clone, query: { newid: "101" } },
          kind: { _tag: "status", status: 500, message: "unable to create VM 101: config file already exists" }
        })
        pve.control.inject({
          match: { method: "POST", path: clone },
          kind: { _tag: "taskFailure", exitStatus: "unable to create VM 102: config file already exists" },
          times: 2
        })
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(103))
          assert.deepStrictEqual(pve.calls(clonePath).map((c) => c.body["newid"]), ["101", "102", "103"])
          assert.deepStrictEqual(vmOf(pve, 102), undefined)
        })
    ))

  it.live("after a 59x it re-reads the target: a clone of ours in progress is waited for, not repeated", () =>
    scenario(
      (pve) =>
        pve.control.inject({ match: { method: "POST", path: clone }, kind: { _tag: "answerLost", status: 596, message: "Connection timed out" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.strictEqual(pve.calls(clonePath).length, 1)
          // Read while it ran (locked `clone`), then once finished.
          assert.isAtLeast(pve.calls(`GET ${base}/status/current`).length, 2)
          assert.deepInclude(vmOf(pve), { name: "vps-101", lock: null })
        }),
      {},
      { taskDurations: { default: 20, qmclone: 200 } }
    ))

  it.live("after a 59x with no target VM, the clone is sent again", () =>
    scenario(
      (pve) => pve.control.inject({ match: { method: "POST", path: clone }, kind: { _tag: "status", status: 599, message: "Too many redirections" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.strictEqual(pve.calls(clonePath).length, 2)
          assert.strictEqual(pve.calls(`GET ${base}/status/current`).length, 1)
        })
    ))

  it.live("after a clone that got no answer, a target that belongs to someone else is set aside and the next VMID cloned into", () =>
    Effect.gen(function*() {
      const pve = yield* inMemory()
      pve.control.inject({ match: { method: "POST", path: clone }, kind: { _tag: "hang" } })
      const agents = pve.agents
      const made = yield* Effect.forkChild(
        Effect.flatMap(Virtualization, (v) => create(v)).pipe(
          Effect.provide(adapterLayer(clusterAt(pve.url), { requestTimeout: "300 millis", connect: () => agents }))
        )
      )
      // The clone is never answered; meanwhile another tool takes VMID 101.
      yield* Effect.suspend(() => pve.calls(clonePath).length > 0 ? Effect.void : Effect.fail("not yet")).pipe(
        Effect.retry({ times: 200, schedule: Schedule.spaced("5 millis") }),
        Effect.orDie
      )
      someoneElses(pve, 101)
      assert.deepStrictEqual(yield* Fiber.join(made), created(102))
      assert.strictEqual(vmOf(pve)?.name, "other-101")
    }).pipe(Effect.scoped))

  it.live("a range with every VMID held is NoMachineIdFree, and nothing is cloned", () =>
    scenario(
      (pve) => {
        for (let vmid = 101; vmid < 104; vmid++) someoneElses(pve, vmid)
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(create(v)), { _tag: "NoMachineIdFree", cluster: "c1" })
          assert.strictEqual(pve.calls(clonePath).length, 0)
        }),
      { vmidRange: { from: 101, to: 104 } }
    ))
})

describe("configuration and power", () => {
  it.live("configure sends every cloud-init key, with SSH keys percent-encoded before the form encoding", () =>
    scenario(
      (pve) => placeAt(pve),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.configure(vm, cloudInit)
          const [sent] = pve.calls(`POST ${base}/config`)
          const joined = cloudInit.sshPublicKeys.join("\n")
          // The form decoding takes one encoding off: what arrives is still percent-encoded once (§3.5).
          assert.strictEqual(sent?.body["sshkeys"], encodeURIComponent(joined))
          assert.match(String(sent?.body["sshkeys"]), /^ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIKk%2B%2Fx%2By%3D%20ann%40laptop%0Assh-rsa%20/)
          assert.deepStrictEqual({ ...sent?.body, sshkeys: undefined }, {
            name: "web-1",
            cores: "2",
            sockets: "1",
            memory: "2048",
            net0: "virtio,bridge=vmbr0",
            ipconfig0: "ip=203.0.113.10/28,gw=203.0.113.1",
            nameserver: "1.1.1.1 9.9.9.9",
            ciuser: "root",
            cipassword: "Root-pass-1",
            sshkeys: undefined,
            ciupgrade: "0",
            serial0: "socket",
            vga: "serial0",
            agent: "1",
            onboot: "1",
            tags: "zh;zh-order-order-web-1",
            description: description("order-web-1")
          })
          // Stored as PVE keeps it: the keys still encoded, and they decode to what we sent.
          assert.strictEqual(decodeURIComponent(vmOf(pve)?.config["sshkeys"] ?? ""), joined)
        })
    ))

  it.live("starting a running VM and stopping a stopped one succeed; resetting a stopped one does not", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running" }),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.start(vm)
          yield* v.stop(vm)
          yield* v.stop(vm)
          yield* v.shutdown(vm, 60)
          assert.strictEqual(vmOf(pve)?.status, "stopped")
          assert.deepInclude(yield* Effect.flip(v.reset(vm)), { _tag: "TaskFailed", exitStatus: "HTTP 500: VM 101 not running" })
          assert.deepStrictEqual(pve.control.state().tasks.map((t) => [t.type, t.exitstatus]), [
            ["qmstart", "VM 101 already running"],
            ["qmstop", "OK"],
            ["qmstop", "OK"],
            ["qmshutdown", "OK"]
          ])
        })
    ))

  it.live("a graceful shutdown sends its timeout and waits for the task past the usual task deadline", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running" }),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.shutdown(vm, 1)
          const [sent] = pve.calls(`POST ${base}/status/shutdown`)
          assert.strictEqual(sent?.body["timeout"], "1")
          // Never forced by us: a guest that does not stop is the customer's choice to power off.
          assert.notProperty(sent?.body, "forceStop")
          assert.strictEqual(vmOf(pve)?.status, "stopped")
        }),
      // The guest takes 300 ms to power off: longer than this deadline alone, within it plus the timeout.
      { taskTimeout: "100 millis" },
      { taskDurations: { default: 20, qmshutdown: 300 } }
    ))

  it.live("a guest still up at the shutdown's timeout is ShutdownTimedOut, not an upstream failure", () =>
    scenario(
      (pve) => {
        placeAt(pve, { status: "running" })
        // A guest that ignores ACPI: the task gives up at the timeout (§3.7).
        pve.control.inject({
          match: { method: "POST", path: /\/status\/shutdown$/ },
          kind: { _tag: "taskFailure", exitStatus: "VM quit/powerdown failed - got timeout" }
        })
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.shutdown(vm, 30)), { _tag: "ShutdownTimedOut", timeoutSeconds: 30 })
          // Its "got timeout" is not a lock race: asked once, not again.
          assert.strictEqual(pve.calls(`POST ${base}/status/shutdown`).length, 1)
          assert.strictEqual(vmOf(pve)?.status, "running")
        })
    ))

  it.live("status reads the VM's state, its lock as busy and whether its agent is configured", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running", config: { lock: "snapshot" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* v.status(vm), { status: "running", busy: true, agentEnabled: false })
          pve.control.editConfig(vm.vmid, { lock: null, agent: "1" })
          assert.deepStrictEqual(yield* v.status(vm), { status: "running", busy: false, agentEnabled: true })
        })
    ))
})

describe("ownership stamp", () => {
  it.live("ownerOf reads the VM's config: the tag first, the description's line when there is no tag", () =>
    scenario(
      (pve) => placeAt(pve, { config: { tags: "prod;zh;zh-order-o-101", description: "zh-order: o-other" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: "o-101", busy: false })
          pve.control.editConfig(vm.vmid, { tags: null, description: "Managed by ZH\nzh-order: o-101", lock: "clone" })
          assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: "o-101", busy: true })
          pve.control.editConfig(vm.vmid, { description: null, lock: null })
          assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: null, busy: false })
        })
    ))

  it.live("setStartOnBoot writes onboot as 1 or 0", () =>
    scenario(
      (pve) => placeAt(pve),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.setStartOnBoot(vm, false)
          assert.strictEqual(vmOf(pve)?.config["onboot"], "0")
          yield* v.setStartOnBoot(vm, true)
          assert.strictEqual(vmOf(pve)?.config["onboot"], "1")
          assert.deepStrictEqual(pve.calls(`POST ${base}/config`).map((c) => c.body), [{ onboot: "0" }, { onboot: "1" }])
        })
    ))
})

/** A VM carrying our stamp for order `o-101`. */
const ours = (pve: Pve, options: { readonly status?: "running" | "stopped" } = {}) =>
  placeAt(pve, { ...options, config: { tags: "zh;zh-order-o-101" } })

describe("destroy", () => {
  it.live("reads the VM's stamp, then purges the VM with its unreferenced disks", () =>
    scenario(
      (pve) => ours(pve),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.destroy(vm, "o-101")
          assert.deepStrictEqual(pve.calls().map((r) => `${r.method} ${r.path}`), [
            `GET /api2/json${base}/config`,
            `DELETE /api2/json${base}`
          ])
          assert.deepStrictEqual(pve.calls(`DELETE ${base}`)[0]?.query, { purge: "1", "destroy-unreferenced-disks": "1" })
          assert.isUndefined(vmOf(pve))
        })
    ))

  it.live("a VM with another order's stamp, or none, is refused as VmNotOurs and nothing is deleted", () =>
    scenario(
      (pve) => placeAt(pve, { config: { tags: "zh-order-o-999" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), { _tag: "VmNotOurs", vmid: 101, expected: "o-101", found: "o-999" })
          pve.control.editConfig(vm.vmid, { tags: null, description: "their notes" })
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), { _tag: "VmNotOurs", found: null })
          assert.strictEqual(pve.calls(`DELETE ${base}`).length, 0)
          assert.isDefined(vmOf(pve))
        })
    ))

  it.live("a locked VM with no stamp yet (a clone under way) is refused as TaskFailed, not as someone else's", () =>
    scenario(
      (pve) => placeAt(pve, { config: { lock: "clone" } }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), { _tag: "TaskFailed", exitStatus: "VM 101 is locked (clone)" })
          assert.strictEqual(pve.calls(`DELETE ${base}`).length, 0)
        })
    ))

  it.live("a VM that no longer exists anywhere is destroyed already", () =>
    scenario(
      (pve) => placeAt(pve, { vmid: 102 }),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.destroy(vm, "o-101")
          assert.strictEqual(pve.requests().filter((r) => r.method === "DELETE").length, 0)
          assert.isDefined(vmOf(pve, 102))
        })
    ))

  it.live("a VM that moved to another node is destroyed there, after its stamp is read there", () =>
    scenario(
      (pve) => {
        ours(pve)
        pve.control.migrate(vm.vmid, "pve2")
      },
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.destroy(vm, "o-101")
          assert.strictEqual(pve.calls("GET /nodes/pve2/qemu/101/config").length, 1)
          assert.strictEqual(pve.calls("DELETE /nodes/pve2/qemu/101").length, 1)
          assert.isUndefined(vmOf(pve))
        })
    ))

  it.live("a running VM is refused with TaskFailed and is not stopped", () =>
    scenario(
      (pve) => ours(pve, { status: "running" }),
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), {
            _tag: "TaskFailed",
            operation: "destroy",
            exitStatus: "HTTP 500: VM 101 is running - destroy failed"
          })
          // A refusal is final: neither retried nor worked around by stopping the VM.
          assert.deepStrictEqual(pve.calls().map((r) => `${r.method} ${r.path}`), [
            `GET /api2/json${base}/config`,
            `DELETE /api2/json${base}`
          ])
          assert.strictEqual(vmOf(pve)?.status, "running")
        })
    ))
})
