// The provisioning and end-of-life calls of a VPS, specified against a scripted PVE on loopback: the template clone
// and its VMID races, cloud-init configuration with PVE's encodings, power, and destruction (reference/proxmox.md §3,
// §5).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type MachineCreation, type Virtualization } from "../../../ports/Virtualization.ts"
import { base, cloudInit, missingConfig, replyTask, scenario, type Stub, vm } from "./stubPve.ts"

describe("createMachine", () => {
  const template = { cluster: "c1", node: "pve1", vmid: 9000 }
  const create = (v: Virtualization["Service"], order = "o-101") =>
    v.createMachine(order, { cluster: "c1", node: "pve1", template, name: "vps-101", storage: "local-lvm" })
  const clonePath = "POST /nodes/pve1/qemu/9000/clone"
  const configOf = (vmid: number) => `GET /nodes/pve1/qemu/${vmid}/config`
  const missing = (vmid: number) => ({ status: 500, message: `Configuration file 'nodes/pve1/qemu-server/${vmid}.conf' does not exist` })
  /** VMIDs 101 and 102 hold nothing, on the node or anywhere in the cluster. */
  const nothingThere = (stub: Stub) => {
    stub.route(configOf(101), () => missing(101))
    stub.route(configOf(102), () => missing(102))
    stub.route("GET /cluster/nextid", (request) => ({ data: request.query.get("vmid") }))
  }
  const created = (vmid: number): MachineCreation => ({ _tag: "Created", vm: { cluster: "c1", node: "pve1", vmid } })

  it.live("clones the template into the first VMID of our range, to the target storage, with our stamp in its description", () =>
    scenario(
      (stub) => {
        nothingThere(stub)
        replyTask(stub, clonePath, { type: "qmclone", runningPolls: 2 })
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          const [sent] = stub.calls(clonePath)
          assert.deepStrictEqual(Object.fromEntries(sent?.form ?? []), {
            newid: "101",
            name: "vps-101",
            full: "1",
            storage: "local-lvm",
            description: "Managed by ZH hosting for one customer's VPS: do not edit, move or delete it here.\nzh-order: o-101"
          })
          assert.strictEqual(stub.calls("GET /cluster/nextid")[0]?.query.get("vmid"), "101")
        })
    ))

  it.live("asked again for the same order, answers the machine made (our stamp at its VMID) without cloning again", () =>
    scenario(
      (stub) => {
        nothingThere(stub)
        replyTask(stub, clonePath, { type: "qmclone" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          stub.route(configOf(101), () => ({ data: { description: "zh-order: o-101", name: "vps-101" } }))
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.strictEqual(stub.calls(clonePath).length, 1)
        })
    ))

  it.live("a clone of ours still running at its VMID (a process stopped in its middle) is a creation in progress", () =>
    scenario(
      (stub) => stub.route(configOf(101), () => ({ data: { description: "zh-order: o-101", lock: "clone" } })),
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), { _tag: "InProgress" })
          assert.strictEqual(stub.calls(clonePath).length, 0)
        })
    ))

  it.live("a VMID something else holds (on the node, or anywhere per nextid) is set aside and the next one used", () =>
    scenario(
      (stub) => {
        stub.route(configOf(101), () => ({ data: { name: "someone-elses-vm" } }))
        stub.route(configOf(102), () => missing(102))
        stub.route(configOf(103), () => missing(103))
        stub.route("GET /cluster/nextid", (request) =>
          request.query.get("vmid") === "102"
            ? { status: 400, reason: "Parameter verification failed.", errors: { vmid: "VM 102 already exists" } }
            : { data: request.query.get("vmid") })
        replyTask(stub, clonePath, { type: "qmclone" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(103))
          // Set aside for good: another order starts past them.
          stub.route(configOf(104), () => missing(104))
          assert.deepStrictEqual(yield* create(v, "o-104"), created(104))
          assert.deepStrictEqual(stub.calls(clonePath).map((c) => c.form?.get("newid")), ["103", "104"])
        })
    ))

  it.live("'already exists' at the clone, at once or in the task, sets the VMID aside and takes the next one", () =>
    scenario(
      (stub) => {
        nothingThere(stub)
        stub.route(clonePath, (_, attempt) =>
          attempt === 0
            ? { status: 500, message: "unable to create VM 101: config file already exists" }
            : { data: stub.task({ type: "qmclone" }) })
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(102))
          assert.deepStrictEqual(stub.calls(clonePath).map((c) => c.form?.get("newid")), ["101", "102"])
        })
    ))

  it.live("after a 59x it re-reads the target: a clone of ours in progress is waited for, not repeated", () =>
    scenario(
      (stub) => {
        nothingThere(stub)
        stub.route(clonePath, () => ({ status: 596, reason: "Connection timed out" }))
        stub.route(`GET ${base}/status/current`, (_, attempt) => ({
          data: attempt < 2 ? { status: "stopped", lock: "clone" } : { status: "stopped", name: "vps-101" }
        }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.strictEqual(stub.calls(clonePath).length, 1)
          assert.strictEqual(stub.calls(`GET ${base}/status/current`).length, 3)
        })
    ))

  it.live("after a 59x with no target VM, the clone is sent again", () =>
    scenario(
      (stub) => {
        nothingThere(stub)
        stub.route(clonePath, (_, attempt) =>
          attempt === 0 ? { status: 599, reason: "Too many redirections" } : { data: stub.task({ type: "qmclone" }) })
        stub.route(`GET ${base}/status/current`, () => ({ status: 500, message: missingConfig }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* create(v), created(101))
          assert.strictEqual(stub.calls(clonePath).length, 2)
        })
    ))

  it.live("after a 59x, a target that belongs to someone else is set aside and the next VMID cloned into", () =>
    scenario(
      (stub) => {
        nothingThere(stub)
        stub.route(clonePath, (_, attempt) =>
          attempt === 0 ? { status: 596, reason: "Connection timed out" } : { data: stub.task({ type: "qmclone" }) })
        stub.route(`GET ${base}/status/current`, () => ({ data: { status: "running", name: "someone-elses-vm" } }))
      },
      (v) => Effect.map(create(v), (made) => assert.deepStrictEqual(made, created(102)))
    ))

  it.live("a range with every VMID held is NoMachineIdFree, and nothing is cloned", () =>
    scenario(
      (stub) => {
        for (let vmid = 101; vmid < 104; vmid++) stub.route(configOf(vmid), () => ({ data: { name: `other-${vmid}` } }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(create(v)), { _tag: "NoMachineIdFree", cluster: "c1" })
          assert.strictEqual(stub.calls(clonePath).length, 0)
        }),
      { vmidRange: { from: 101, to: 104 } }
    ))
})

describe("configuration and power", () => {
  it.live("configure sends every cloud-init key, with SSH keys percent-encoded before the form encoding", () =>
    scenario(
      (stub) => replyTask(stub, `POST ${base}/config`, { type: "qmconfig" }),
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.configure(vm, cloudInit)
          const [sent] = stub.calls(`POST ${base}/config`)
          const joined = cloudInit.sshPublicKeys.join("\n")
          // On the wire the keys are encoded twice: `%` of the first encoding became `%25` (§3.5).
          assert.include(sent?.rawBody ?? "", `sshkeys=${encodeURIComponent(encodeURIComponent(joined))}`)
          assert.include(sent?.rawBody ?? "", "sshkeys=ssh-ed25519%2520AAAAC3Nz%252Fx%252By%253D%2520ann%2540laptop%250Assh-rsa")
          const form = Object.fromEntries(sent?.form ?? [])
          assert.strictEqual(decodeURIComponent(form["sshkeys"] ?? ""), joined)
          assert.deepStrictEqual({ ...form, sshkeys: undefined }, {
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
            description: "Managed by ZH hosting for one customer's VPS: do not edit, move or delete it here.\nzh-order: order-web-1"
          })
        })
    ))

  it.live("starting a running VM and stopping a stopped one succeed; resetting a stopped one does not", () =>
    scenario(
      (stub) => {
        replyTask(stub, `POST ${base}/status/start`, { exitstatus: "VM 101 already running" })
        replyTask(stub, `POST ${base}/status/stop`, { type: "qmstop", exitstatus: "VM 101 not running" })
        stub.route(`POST ${base}/status/shutdown`, () => ({ status: 500, message: "VM 101 not running" }))
        replyTask(stub, `POST ${base}/status/reset`, { type: "qmreset", exitstatus: "VM 101 not running" })
      },
      (v) =>
        Effect.gen(function*() {
          yield* v.start(vm)
          yield* v.stop(vm)
          yield* v.shutdown(vm, 60)
          assert.deepInclude(yield* Effect.flip(v.reset(vm)), { _tag: "TaskFailed", exitStatus: "VM 101 not running" })
        })
    ))

  it.live("a graceful shutdown sends its timeout and waits for the task past the usual task deadline", () =>
    scenario(
      (stub) => replyTask(stub, `POST ${base}/status/shutdown`, { type: "qmshutdown", runningPolls: 12 }),
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.shutdown(vm, 1)
          const [sent] = stub.calls(`POST ${base}/status/shutdown`)
          assert.strictEqual(sent?.form.get("timeout"), "1")
          // Never forced by us: a guest that does not stop is the customer's choice to power off.
          assert.isNull(sent?.form.get("forceStop") ?? null)
        }),
      // The stub's task runs about 12 polls (~240 ms): longer than this deadline alone, within it plus the timeout.
      { taskTimeout: "100 millis" }
    ))

  it.live("a guest still up at the shutdown's timeout is ShutdownTimedOut, not an upstream failure", () =>
    scenario(
      (stub) => replyTask(stub, `POST ${base}/status/shutdown`, { type: "qmshutdown", runningPolls: 1, exitstatus: "VM quit/powerdown failed - got timeout" }),
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.shutdown(vm, 30)), { _tag: "ShutdownTimedOut", timeoutSeconds: 30 })
          // Its "got timeout" is not a lock race: asked once, not again.
          assert.strictEqual(stub.calls(`POST ${base}/status/shutdown`).length, 1)
        })
    ))

  it.live("status reads PVE's loosely typed answer", () =>
    scenario(
      (stub) => stub.route(`GET ${base}/status/current`, () => ({ data: { status: "running", lock: "snapshot", agent: 0, vmid: "101" } })),
      (v) =>
        Effect.map(v.status(vm), (s) => assert.deepStrictEqual(s, { status: "running", busy: true, agentEnabled: false }))
    ))
})

describe("ownership stamp", () => {
  it.live("ownerOf reads the VM's config: the tag first, the description's line when there is no tag", () =>
    scenario(
      (stub) =>
        stub.route(`GET ${base}/config`, (_, attempt) => ({
          data: attempt === 0
            ? { tags: "prod;zh;zh-order-o-101", description: "zh-order: o-other", digest: "x" }
            : attempt === 1
            ? { description: "Managed by ZH\nzh-order: o-101", lock: "clone" }
            : { name: "hand-made" }
        })),
      (v) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: "o-101", busy: false })
          assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: "o-101", busy: true })
          assert.deepStrictEqual(yield* v.ownerOf(vm), { stamp: null, busy: false })
        })
    ))

  it.live("setStartOnBoot writes onboot as 1 or 0", () =>
    scenario(
      (stub) => replyTask(stub, `POST ${base}/config`, { type: "qmconfig" }),
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.setStartOnBoot(vm, false)
          yield* v.setStartOnBoot(vm, true)
          assert.deepStrictEqual(stub.calls(`POST ${base}/config`).map((c) => c.form.toString()), ["onboot=0", "onboot=1"])
        })
    ))
})

/** The config of a VM carrying our stamp for order `o-101`. */
const ours = () => ({ data: { name: "web-1", tags: "zh;zh-order-o-101" } })

describe("destroy", () => {
  it.live("reads the VM's stamp, then purges the VM with its unreferenced disks", () =>
    scenario(
      (stub) => {
        stub.route(`GET ${base}/config`, ours)
        replyTask(stub, `DELETE ${base}`, { type: "qmdestroy" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.destroy(vm, "o-101")
          assert.deepStrictEqual(stub.calls().map((s) => `${s.method} ${s.path}`), [`GET ${base}/config`, `DELETE ${base}`])
          assert.strictEqual(stub.calls(`DELETE ${base}`)[0]?.query.toString(), "purge=1&destroy-unreferenced-disks=1")
        })
    ))

  it.live("a VM with another order's stamp, or none, is refused as VmNotOurs and nothing is deleted", () =>
    scenario(
      (stub) => {
        stub.route(`GET ${base}/config`, (_, attempt) =>
          attempt === 0 ? { data: { tags: "zh-order-o-999" } } : { data: { name: "someone-elses", description: "their notes" } })
        replyTask(stub, `DELETE ${base}`, { type: "qmdestroy" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), { _tag: "VmNotOurs", vmid: 101, expected: "o-101", found: "o-999" })
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), { _tag: "VmNotOurs", found: null })
          assert.strictEqual(stub.calls(`DELETE ${base}`).length, 0)
        })
    ))

  it.live("a locked VM with no stamp yet (a clone under way) is refused as TaskFailed, not as someone else's", () =>
    scenario(
      (stub) => stub.route(`GET ${base}/config`, () => ({ data: { lock: "clone" } })),
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), { _tag: "TaskFailed", exitStatus: "VM 101 is locked (clone)" })
          assert.strictEqual(stub.calls(`DELETE ${base}`).length, 0)
        })
    ))

  it.live("a VM that no longer exists anywhere is destroyed already", () =>
    scenario(
      (stub) => {
        stub.route(`GET ${base}/config`, () => ({ status: 500, message: missingConfig }))
        stub.route("GET /cluster/resources", () => ({ data: [{ type: "qemu", vmid: 102, node: "pve1" }] }))
      },
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.destroy(vm, "o-101")
          assert.strictEqual(stub.calls(`DELETE ${base}`).length, 0)
        })
    ))

  it.live("a VM that moved to another node is destroyed there, after its stamp is read there", () =>
    scenario(
      (stub) => {
        stub.route(`GET ${base}/config`, () => ({ status: 500, message: missingConfig }))
        stub.route("GET /cluster/resources", () => ({ data: [{ type: "qemu", vmid: 101, node: "pve2" }] }))
        stub.route("GET /nodes/pve2/qemu/101/config", ours)
        replyTask(stub, "DELETE /nodes/pve2/qemu/101", { node: "pve2", type: "qmdestroy" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          yield* v.destroy(vm, "o-101")
          assert.strictEqual(stub.calls("DELETE /nodes/pve2/qemu/101").length, 1)
        })
    ))

  it.live("a running VM is refused with TaskFailed and is not stopped", () =>
    scenario(
      (stub) => {
        stub.route(`GET ${base}/config`, ours)
        stub.route(`DELETE ${base}`, () => ({ status: 500, message: "VM 101 is running - destroy failed" }))
        replyTask(stub, `POST ${base}/status/stop`, { type: "qmstop" })
      },
      (v, stub) =>
        Effect.gen(function*() {
          assert.deepInclude(yield* Effect.flip(v.destroy(vm, "o-101")), {
            _tag: "TaskFailed",
            operation: "destroy",
            exitStatus: "HTTP 500: VM 101 is running - destroy failed"
          })
          // A refusal is final: neither retried nor worked around by stopping the VM.
          assert.deepStrictEqual(stub.calls().map((s) => `${s.method} ${s.path}`), [`GET ${base}/config`, `DELETE ${base}`])
        })
    ))
})
