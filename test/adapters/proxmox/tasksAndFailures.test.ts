// How PVE's tasks are waited for and how its failures map onto the port, specified against the simulated PVE in
// memory: task polling and logs, missing VMs, transient failures, timeouts and locks (reference/proxmox.md §2, §5).
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { pollSchedule } from "../../../adapters/proxmox/tasks.ts"
import { passing } from "../../support/eventually.ts"
import { cloudInit as aCloudInit } from "../../support/virtualizationMother.ts"
import { apiPath, base, cloudInit, placeAt, scenario, vm } from "./simulatedPve.ts"

const taskStatus = /^\/api2\/json\/nodes\/[^/]+\/tasks\/[^/]+\/status$/
const missingConfig = "Configuration file 'nodes/pve1/qemu-server/101.conf' does not exist"

describe("tasks", () => {
  it.effect("polls the task on the UPID's node at the initial pace at first, tolerating 'no such task'", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        // A UPID read before its log file is written (§2.3).
        pve.control.inject({
          match: { method: "GET", path: taskStatus },
          kind: { _tag: "status", status: 400, message: "Parameter verification failed.", errors: { upid: "no such task" } }
        })
      },
      (v, pve) =>
        Effect.gen(function*() {
          // The resize takes 150 ms of the test clock.
          const resizing = yield* Effect.forkChild(v.resizeDisk(vm, 40))
          yield* passing("400 millis", "5 millis")
          yield* Fiber.join(resizing)
          const [resize] = pve.calls(`PUT ${base}/resize`)
          assert.deepStrictEqual(resize?.body, { disk: "scsi0", size: "40G" })
          assert.strictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.diskBytes, 40 * 1024 ** 3)
          const polls = pve.requests().filter((r) => taskStatus.test(r.path))
          for (const poll of polls) assert.match(apiPath(poll), /^\/nodes\/pve1\/tasks\/UPID:pve1:/)
          // testOptions poll every 20 ms during a task's first second (backing off only after it): the refused read,
          // the reads while it runs, and the one that sees it stopped, each one short pause after the last.
          assert.deepStrictEqual(polls.slice(1).map((p, i) => p.at - (polls[i]?.at ?? 0)), Array(polls.length - 1).fill(20))
          assert.strictEqual(polls.length, 9)
        }),
      {},
      { taskDurations: { default: 20, resize: 150 } }
    ))

  it.live("a task that stops with an error fails TaskFailed with the last lines of its log", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({
          match: { method: "PUT", path: /\/resize$/ },
          kind: {
            _tag: "taskFailure",
            exitStatus: "command '/sbin/lvextend -L 41943040k pve/vm-101-disk-0' failed: exit code 5",
            log: Array.from({ length: 70 }, (_, i) => `line ${i + 1}`)
          }
        })
      },
      (v, pve) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(v.resizeDisk(vm, 40))
          const exitStatus = "command '/sbin/lvextend -L 41943040k pve/vm-101-disk-0' failed: exit code 5"
          assert.deepInclude(error, { _tag: "TaskFailed", operation: "resizeDisk", exitStatus })
          if (error._tag !== "TaskFailed") return
          // 70 lines, the exit status, then its TASK ERROR line: the last 20 of 72.
          assert.strictEqual(error.log.length, 20)
          assert.strictEqual(error.log[0], "line 53")
          assert.strictEqual(error.log[18], exitStatus)
          assert.strictEqual(error.log[19], `TASK ERROR: ${exitStatus}`)
          const logReads = pve.requests().filter((r) => r.path.endsWith("/log"))
          assert.deepStrictEqual(logReads.map((r) => r.query), [{ start: "0", limit: "50" }, { start: "52", limit: "20" }])
          // Its work undone: the disk keeps its size.
          assert.strictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.diskBytes, 10 * 1024 ** 3)
        })
    ))

  it.live("'WARNINGS: n' is a success", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({ match: { method: "POST", path: /\/status\/start$/ }, kind: { _tag: "taskFailure", exitStatus: "WARNINGS: 2" } })
      },
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.start(vm)
          assert.deepInclude(pve.control.state().tasks.find((t) => t.type === "qmstart"), { status: "stopped", exitstatus: "WARNINGS: 2" })
          assert.strictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.status, "running")
        })
    ))

  it.live("a task still running at its deadline makes the operation unavailable", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running" }),
      (v) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(v.shutdown(vm, 0))
          assert.strictEqual(error._tag, "VirtualizationUnavailable")
          assert.include(JSON.stringify(error), "still running")
        }),
      { taskTimeout: "300 millis" },
      { taskDurations: { default: 20, qmshutdown: 60_000 } }
    ))
})

describe("error mapping", () => {
  it.live("a missing configuration file is VmNotFound, at once", () =>
    scenario(
      () => undefined,
      (v, pve) =>
        Effect.gen(function*() {
          const notFound = { _tag: "VmNotFound", cluster: "c1", vmid: 101 } as const
          assert.deepInclude(yield* Effect.flip(v.status(vm)), notFound)
          assert.deepInclude(yield* Effect.flip(v.listSnapshots(vm)), notFound)
          assert.deepInclude(yield* Effect.flip(v.setCloudInitPassword(vm, Redacted.make("Ci-pw-2"))), notFound)
          assert.strictEqual(pve.calls(`GET ${base}/status/current`).length, 1)
        })
    ))

  it.live("a refusal (400, or a 500 stating a fact) is TaskFailed at once and is not retried", () =>
    scenario(
      (pve) => placeAt(pve),
      (v, pve) =>
        Effect.gen(function*() {
          const badKey = aCloudInit("web-1", { sshPublicKeys: ["not-a-key"] })
          const refusals = [
            [v.createSnapshot(vm, "1st", ""), "HTTP 400: Parameter verification failed.; snapname: invalid format - invalid configuration ID '1st'"],
            [v.createSnapshot(vm, "current", ""), "HTTP 500: unable to use snapshot name 'current' (reserved name)"],
            [v.reset(vm), "HTTP 500: VM 101 not running"],
            [v.configure(vm, badKey), "HTTP 500: SSH public key validation error"]
          ] as const
          for (const [operation, exitStatus] of refusals) {
            assert.deepInclude(yield* Effect.flip(operation), { _tag: "TaskFailed", exitStatus, log: [] })
          }
          assert.strictEqual(pve.calls(`POST ${base}/snapshot`).length, 2)
          assert.strictEqual(pve.calls(`POST ${base}/status/reset`).length, 1)
          assert.strictEqual(pve.calls(`POST ${base}/config`).length, 1)
        })
    ))

  it.live("5xx answers are retried with a bound, then the operation is unavailable", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({ match: { method: "GET", path: /\/status\/current$/ }, kind: { _tag: "status", status: 503 }, times: Infinity })
      },
      (v, pve) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(v.status(vm))
          assert.deepInclude(error, { _tag: "VirtualizationUnavailable", operation: "status" })
          assert.include(JSON.stringify(error), "HTTP 503")
          assert.strictEqual(pve.calls(`GET ${base}/status/current`).length, 3)
        })
    ))

  it.live("transient failures (500, 596, dropped connections) that clear up are invisible", () =>
    scenario(
      (pve) => {
        placeAt(pve, { config: { agent: "1" } })
        const status = { method: "GET", path: /\/status\/current$/ }
        pve.control.inject({ match: status, kind: { _tag: "dropConnection" } })
        pve.control.inject({ match: status, kind: { _tag: "status", status: 500, message: "got no worker upid - try again" } })
        pve.control.inject({ match: { method: "GET", path: /\/cluster\/resources$/ }, kind: { _tag: "status", status: 596, message: "Connection timed out" } })
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* v.status(vm), { status: "stopped", busy: false, agentEnabled: true })
          assert.strictEqual(pve.calls(`GET ${base}/status/current`).length, 3)
          assert.strictEqual((yield* v.listVms("c1")).length, 5)
          assert.strictEqual(pve.calls("GET /cluster/resources").length, 2)
        })
    ))

  it.live("an upstream that does not answer in time makes the operation unavailable", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({ match: { method: "GET", path: /\/status\/current$/ }, kind: { _tag: "hang" }, times: Infinity })
      },
      (v, pve) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(v.status(vm))
          assert.deepInclude(error, { _tag: "VirtualizationUnavailable", operation: "status" })
          assert.include(JSON.stringify(error), "no answer within")
          assert.strictEqual(pve.calls(`GET ${base}/status/current`).length, 2)
        }),
      { requestTimeout: "150 millis", retries: 1 }
    ))

  it.live("a VM lock, answered at once or by the task, is waited out with bounded retries", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({
          match: { method: "POST", path: /\/config$/ },
          kind: { _tag: "status", status: 500, message: "VM is locked (clone)" },
          times: 2
        })
        // Another worker held the config's flock past PVE's 10 s wait (§5).
        pve.control.inject({
          match: { method: "PUT", path: /\/resize$/ },
          kind: { _tag: "taskFailure", exitStatus: "can't lock file '/var/lock/qemu-server/lock-101.conf' - got timeout" }
        })
      },
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.configure(vm, cloudInit)
          assert.strictEqual(pve.calls(`POST ${base}/config`).length, 3)
          yield* v.resizeDisk(vm, 20)
          assert.strictEqual(pve.calls(`PUT ${base}/resize`).length, 2)
          assert.deepInclude(pve.control.state().vms.find((x) => x.vmid === vm.vmid), { name: "web-1", diskBytes: 20 * 1024 ** 3 })
        })
    ))

  it.live("a lock that never clears makes the operation unavailable", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.editConfig(vm.vmid, { lock: "backup" })
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* Effect.flip(v.setStartOnBoot(vm, true)))._tag, "VirtualizationUnavailable")
          assert.strictEqual(pve.calls(`POST ${base}/config`).length, 3)
          assert.isUndefined(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.config["onboot"])
        })
    ))

  it.live("a start whose task keeps failing on a lock is unavailable, like a config write on a locked VM", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.editConfig(vm.vmid, { lock: "backup" })
      },
      (v, pve) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(v.start(vm))
          assert.strictEqual(error._tag, "VirtualizationUnavailable")
          assert.include(error.message, "locked")
          assert.strictEqual(pve.calls(`POST ${base}/status/start`).length, 3)
          assert.strictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.status, "stopped")
        })
    ))

  it.live("an unknown cluster is ClusterUnknown", () =>
    scenario(() => undefined, (v) =>
      Effect.gen(function*() {
        assert.deepInclude(yield* Effect.flip(v.listVms("elsewhere")), { _tag: "ClusterUnknown", cluster: "elsewhere" })
      })))
})

describe("the task polling schedule", () => {
  it.effect("keeps the initial pace for a second, then backs off up to the cap", () =>
    Effect.gen(function*() {
      const times: Array<number> = []
      const schedule = pollSchedule({ initialInterval: "50 millis", maxInterval: "2 seconds", logLines: 10 })
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => times.push(t))).pipe(
          Effect.repeat({ schedule, times: 300 })
        )
      )
      yield* TestClock.adjust("900 seconds")
      yield* Fiber.join(fiber)
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      const start = times[0]!
      const early = gaps.filter((_, i) => times[i]! - start < 1000)
      assert.isNotEmpty(early)
      for (const gap of early) assert.strictEqual(gap, 50)
      const late = gaps.slice(early.length)
      for (let i = 1; i < late.length; i++) assert.isAtLeast(late[i]!, late[i - 1]!)
      assert.strictEqual(Math.max(...gaps), 2000)
    }))

  it.effect("after the first second, waits at most a thirty-second of the time elapsed (a task is seen ≤ ~3 % late)", () =>
    Effect.gen(function*() {
      const times: Array<number> = []
      const schedule = pollSchedule({ initialInterval: "50 millis", maxInterval: "2 seconds", logLines: 10 })
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => times.push(t))).pipe(
          Effect.repeat({ schedule, times: 120 })
        )
      )
      yield* TestClock.adjust("120 seconds")
      yield* Fiber.join(fiber)
      const start = times[0]!
      for (let i = 1; i < times.length; i++) {
        const elapsed = times[i - 1]! - start
        if (elapsed >= 1000) assert.isAtMost(times[i]! - times[i - 1]!, Math.max(50, Math.ceil(elapsed / 32)) + 1)
      }
      assert.isAbove(times.at(-1)! - start, 3000)
    }))
})
