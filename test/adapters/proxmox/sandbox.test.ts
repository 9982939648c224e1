// The Proxmox wrapper against the sandbox PVE (adapters/proxmox/sandbox): a VPS's whole life over real HTTP and WebSocket,
// from a template clone to its destruction, plus an API-token cluster and tickets that expire upstream.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Schedule, Stream } from "effect"
import { sandboxProxmox } from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import type { ProxmoxCluster } from "../../../ports/ProxmoxClusters.ts"
import { Virtualization } from "../../../ports/Virtualization.ts"
import { cloudInit } from "../../support/virtualizationMother.ts"
import { adapterLayer, noTls } from "./simulatedPve.ts"

const token = { id: "root@pam!zh", secret: "3f0c5a2e-9d41-4b8e-a1c7-6e2d9b0f4a13" }

const sandboxCluster = (url: string, auth: ProxmoxCluster["auth"]): ProxmoxCluster => ({ name: "c1", url, auth, tls: noTls })

const rootLogin = { kind: "password", username: "root@pam", password: Redacted.make("sandbox") } as const

const sandbox = sandboxProxmox({ taskDurations: { default: 20 }, tokens: [token] })

const withAdapter = <A, E>(cluster: ProxmoxCluster, f: (v: Virtualization["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Virtualization, f).pipe(Effect.provide(adapterLayer(cluster, {
    taskTimeout: "10 seconds",
    cloneTimeout: "10 seconds",
    vmidRange: { from: 4321, to: 4400 }
  })))

describe("ProxmoxVirtualization against the sandbox PVE", () => {
  it.live("clones, configures, resizes, runs, snapshots, opens the console of and destroys a VPS", () =>
    Effect.gen(function*() {
      const pve = yield* sandbox
      yield* withAdapter(sandboxCluster(pve.url, rootLogin), (v) =>
        Effect.gen(function*() {
          const capacity = yield* v.nodeCapacity("c1", "local-lvm")
          assert.deepStrictEqual(capacity.map((n) => n.node).sort(), ["pve1", "pve2"])
          const before = capacity.find((n) => n.node === "pve1")
          assert.isNotNull(before?.storage ?? null)
          assert.isTrue((yield* v.listVms("c1")).some((x) => x.vmid === 9000 && x.template))

          const spec = { cluster: "c1", node: "pve1", template: { cluster: "c1", node: "pve1", vmid: 9000 }, name: "vps-4321", storage: "local-lvm" }
          const made = yield* v.createMachine("o-4321", spec)
          assert.strictEqual(made._tag, "Created")
          if (made._tag !== "Created") return
          const vm = made.vm
          assert.deepStrictEqual(vm, { cluster: "c1", node: "pve1", vmid: 4321 })
          // Asked again for the same order: the same machine, not a second clone.
          assert.deepStrictEqual(yield* v.createMachine("o-4321", spec), made)
          assert.deepInclude((yield* v.listVms("c1")).find((x) => x.vmid === vm.vmid), { createdFor: "o-4321", managed: true })
          // Another order gets the next VMID.
          const other = yield* v.createMachine("o-4322", { ...spec, name: "vps-4322" })
          assert.deepStrictEqual(other, { _tag: "Created", vm: { ...vm, vmid: 4322 } })
          if (other._tag === "Created") yield* v.destroy(other.vm, "o-4322")

          yield* v.configure(vm, cloudInit("vps-4321", {
            stamp: "o-4321",
            password: Redacted.make("Root-pass-1"),
            sshPublicKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKk+/x= ann@laptop"]
          }))
          yield* v.resizeDisk(vm, 20)
          const stored = pve.control.state().vms.find((x) => x.vmid === vm.vmid)
          assert.strictEqual(stored?.cores, 2)
          assert.strictEqual(stored?.memory, 2048)
          assert.strictEqual(stored?.diskBytes, 20 * 1024 ** 3)
          assert.strictEqual(decodeURIComponent(stored?.config["sshkeys"] ?? ""), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKk+/x= ann@laptop")
          const after = (yield* v.nodeCapacity("c1", "local-lvm")).find((n) => n.node === "pve1")
          assert.strictEqual((after?.committedCpus ?? 0) - (before?.committedCpus ?? 0), 2)

          yield* v.start(vm)
          yield* v.start(vm)
          assert.strictEqual((yield* v.status(vm)).status, "running")

          yield* v.createSnapshot(vm, "first", "before changes")
          const snapshots = yield* v.listSnapshots(vm)
          assert.deepStrictEqual(snapshots.map((s) => [s.name, s.description]), [["first", "before changes"]])
          yield* v.deleteSnapshot(vm, "first")
          assert.deepStrictEqual(yield* v.listSnapshots(vm), [])

          // The agent comes up a moment after the start, as a real guest's would.
          const hostname = yield* v.guestExec(vm, ["hostname"]).pipe(
            Effect.retry({ times: 50, schedule: Schedule.spaced("50 millis"), while: (e) => e._tag === "GuestAgentUnavailable" })
          )
          assert.strictEqual(hostname.exitCode, 0)
          yield* v.setGuestPassword(vm, "root", Redacted.make("Guest-pass-2"))

          yield* Effect.scoped(Effect.gen(function*() {
            const terminal = yield* v.openConsole(vm)
            yield* terminal.resize(100, 30)
            yield* terminal.write(new TextEncoder().encode("\n"))
            const first = yield* Stream.runHead(terminal.output)
            assert.isTrue(first._tag === "Some" && first.value.byteLength > 0)
          }))

          yield* v.stop(vm)
          yield* v.stop(vm)
          yield* v.destroy(vm, "o-4321")
          yield* v.destroy(vm, "o-4321")
          assert.isFalse((yield* v.listVms("c1")).some((x) => x.vmid === vm.vmid))
          // Released, the VMID goes to the next order.
          yield* v.releaseMachine("o-4321")
          assert.deepStrictEqual(yield* v.createMachine("o-4323", { ...spec, name: "vps-4323" }), made)
        }))
    }).pipe(Effect.scoped))

  it.live("works with an API token, and a missing VM is VmNotFound", () =>
    Effect.gen(function*() {
      const pve = yield* sandbox
      yield* withAdapter(
        sandboxCluster(pve.url, { kind: "token", tokenId: token.id, secret: Redacted.make(token.secret), consoleLogin: null }),
        (v) =>
          Effect.gen(function*() {
            assert.isNotEmpty(yield* v.listVms("c1"))
            assert.deepInclude(yield* Effect.flip(v.status({ cluster: "c1", node: "pve1", vmid: 777 })), { _tag: "VmNotFound", vmid: 777 })
            assert.strictEqual((yield* Effect.flip(Effect.scoped(v.openConsole({ cluster: "c1", node: "pve1", vmid: 9000 }))))._tag, "ConsoleClosed")
          })
      )
      assert.isTrue(pve.control.requests().every((r) => r.headers["authorization"]?.startsWith("PVEAPIToken=") === true))
    }).pipe(Effect.scoped))

  it.live("signs in again when the upstream expired its ticket, and rides out injected 5xx", () =>
    Effect.gen(function*() {
      const pve = yield* sandbox
      yield* withAdapter(sandboxCluster(pve.url, rootLogin), (v) =>
        Effect.gen(function*() {
          yield* v.listVms("c1")
          pve.control.advanceClock(3 * 60 * 60 * 1000)
          pve.control.inject({ match: { method: "GET", path: /\/cluster\/resources$/ }, kind: { _tag: "status", status: 503 }, times: 2 })
          assert.isNotEmpty(yield* v.listVms("c1"))
        }))
      const logins = pve.control.requests().filter((r) => r.path.endsWith("/access/ticket"))
      assert.strictEqual(logins.length, 2)
    }).pipe(Effect.scoped))
})
