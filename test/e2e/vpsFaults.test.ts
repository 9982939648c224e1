// Provisioning a VPS through upstream faults and restarts, end to end: the whole application (durable workflow engine
// on a real database) against the sandbox Proxmox registered as cluster "lab". For every step: a transient 503 the
// retries absorb, a persistent 500, a failed task, and a process restart between steps. Whatever happens, no VM,
// address, reservation or VMID is left behind a failed order, its charge is refunded, and no order stays in progress.
//
// The Proxmox adapter's waits come from the test settings (PROXMOX_RETRY_BASE_DELAY_MS 20, PROXMOX_REQUEST_TIMEOUT_MS
// 2500 here; production: 500 and 35000): a persistent 5xx still costs 5 HTTP attempts with back-off (20+40+80+160 ms) times 4
// activity attempts, and a hung request the whole request timeout.
import type { Duration } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { SandboxFaultKind } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import {
  census,
  cleanedUp,
  type Lab,
  placeLabOrder,
  remains,
  type Remains,
  setPoolSize,
  settled,
  startLab,
  vmidOf,
  waitForOrder
} from "../support/faultHarness.ts"

const POOL_SIZE = 32
const QUICK: Duration.Input = "20 seconds"
const PERSISTENT: Duration.Input = "75 seconds"

let lab: Lab
beforeAll(async () => {
  lab = await startLab({
    databaseUrl: process.env["TEST_DATABASE_URL"],
    poolSize: POOL_SIZE,
    // Short but not instant, so a restart finds a step under way.
    taskDurations: { default: 100, qmclone: 200 },
    // A hung request costs this; the sandbox answers the others in milliseconds.
    requestTimeoutMs: 2_500
  })
}, 60_000)
afterAll(() => lab?.close(), 60_000)

/** Each step's upstream call as the sandbox sees it; the VM's own calls are aimed at the order's VMID alone. */
const calls = {
  1: { what: "GET /cluster/resources", method: "GET", path: /\/cluster\/resources$/, reason: "The virtualization cluster cannot be reached." },
  // The machine's VMID is confirmed free (nextid) before the clone: both are step 2's.
  2: { what: "POST …/clone", method: "POST", path: /\/qemu\/\d+\/clone$/, reason: "Cloning the OS template failed." },
  "2b": { what: "GET /cluster/nextid", method: "GET", path: /\/cluster\/nextid$/, reason: "Cloning the OS template failed." },
  3: { what: "PUT …/resize", method: "PUT", path: (vmid: number) => new RegExp(`/qemu/${vmid}/resize$`), reason: "Sizing the disk failed." },
  5: { what: "POST …/config", method: "POST", path: (vmid: number) => new RegExp(`/qemu/${vmid}/config$`), reason: "Configuring the server failed." },
  6: { what: "POST …/status/start", method: "POST", path: (vmid: number) => new RegExp(`/qemu/${vmid}/status/start$`), reason: "Starting the server failed." }
} as const
type Step = keyof typeof calls
const cases = <S extends Step>(...steps: ReadonlyArray<S>) => steps.map((step) => ({ step, what: calls[step].what }))

const transient: SandboxFaultKind = { _tag: "status", status: 503 }
const persistent500: SandboxFaultKind = { _tag: "status", status: 500 }
const taskFailure: SandboxFaultKind = { _tag: "taskFailure", exitStatus: "simulated worker failure" }

/** Orders with `kind` injected on `step`'s call `times` times; returns what the order left once it settled. */
const orderThrough = async (step: Step, kind: SandboxFaultKind, times: number, within: Duration.Input): Promise<Remains> => {
  const { method, path } = calls[step]
  const arm = (match: RegExp) => lab.sandbox.control.inject({ match: { method, path: match }, kind, times })
  if (path instanceof RegExp) arm(path)
  const order = await lab.run(placeLabOrder)
  // Step 2 lasts at least the clone's duration: time enough to aim the fault at the VMID step 1 gave.
  if (!(path instanceof RegExp)) arm(path(await lab.run(vmidOf(order.id, QUICK))))
  await lab.run(settled(order.id, within))
  await lab.run(cleanedUp(order.id, within))
  return lab.run(remains(order.id, lab.sandbox))
}

/** Completed: one running VM, recorded on the VPS; the address kept, the reservation done with; charged once. */
const expectCompleted = (r: Remains) => {
  expect(r.order.status, r.order.failureReason ?? "").toBe("completed")
  expect(r.vms.map((vm) => [vm.vmid, vm.status, vm.lock])).toEqual([[r.vpsVmid, "running", null]])
  expect(r.vmids).toEqual([r.vpsVmid])
  expect(r.address).toBeDefined()
  expect(r.reservations).toBe(0)
  expect(r.ledger).toEqual(["charge"])
}

/** Failed with a reason the customer can read: nothing of it left anywhere, and the charge refunded. */
const expectCleanFailure = (r: Remains, reason: string) => {
  expect(r.order.status).toBe("failed")
  expect(r.order.failureReason).toBe(`${reason} Nothing was kept and your payment was refunded.`)
  expect(r.vms.map((vm) => `${vm.vmid} ${vm.name} ${vm.status}`)).toEqual([])
  expect(r.address).toBeUndefined()
  expect(r.reservations).toBe(0)
  expect(r.vmids).toEqual([])
  expect(r.ledger).toEqual(["charge", "refund"])
}

/** The writes the sandbox received for `vmid` since request number `since` (VMIDs are reused), numbered. */
const vmWrites = (vmid: number, since: number) => {
  const onVm = new RegExp(`/qemu/${vmid}(/.*)?$`)
  return lab.sandbox.control.requests().map((q, index) => ({ q, index })).slice(since).flatMap(({ q, index }) => {
    const call = onVm.exec(q.path)
    return q.method === "GET" || call === null ? [] : [{ call: `${q.method} ${call[1] ?? ""}`.trim(), index }]
  })
}

const expectNothingInProgress = async () => expect((await lab.run(census(lab.sandbox))).unfinished).toBe(0)

describe("a fault the retries absorb: the order completes with exactly one VM", () => {
  afterEach(() => lab.sandbox.control.clearFaults())

  it.each(cases<Step>(1, 2, "2b", 3, 5, 6))("a single 503 on step $step's call ($what)", async ({ step }) => {
    const r = await orderThrough(step, transient, 1, QUICK)
    expectCompleted(r)
    expect(r.clones).toBe(1)
    await expectNothingInProgress()
  }, 30_000)

  it("a clone request that hangs once: after the request timeout the clone is found missing and made once", async () => {
    const r = await orderThrough(2, { _tag: "hang" }, 1, "60 seconds")
    expectCompleted(r)
    expect(r.clones).toBe(1)
    await expectNothingInProgress()
  }, 75_000)
})

describe("a fault that persists: the order fails, everything is undone and the charge refunded", () => {
  afterEach(() => lab.sandbox.control.clearFaults())

  it.each(cases<Step>(1, 2, "2b"))("a 500 on every attempt of step $step's call ($what)", async ({ step }) => {
    expectCleanFailure(await orderThrough(step, persistent500, 1000, PERSISTENT), calls[step].reason)
    await expectNothingInProgress()
  }, 90_000)

  it.each(cases(2, 3, 5, 6))("a failed task at step $step ($what)", async ({ step }) => {
    expectCleanFailure(await orderThrough(step, taskFailure, 1, QUICK), calls[step].reason)
    await expectNothingInProgress()
  }, 30_000)

  it("step 4: no address left in the pool", async () => {
    await lab.run(setPoolSize(0))
    try {
      const order = await lab.run(placeLabOrder)
      await lab.run(settled(order.id, QUICK))
      await lab.run(cleanedUp(order.id, QUICK))
      expectCleanFailure(await lab.run(remains(order.id, lab.sandbox)), "No public IPv4 address is free right now.")
    } finally {
      await lab.run(setPoolSize(POOL_SIZE))
    }
    await expectNothingInProgress()
  }, 30_000)
})

// Each order's faults are aimed at its own VMID, so these slow cases run side by side.
describe.concurrent("a 500 on every attempt of the new VM's own calls", () => {
  afterAll(() => lab.sandbox.control.clearFaults())

  it.each(cases(3, 5, 6))("at step $step ($what)", async ({ step }) => {
    expectCleanFailure(await orderThrough(step, persistent500, 1000, PERSISTENT), calls[step].reason)
  }, 90_000)
})

describe("a restart between steps: the workflow resumes where it was and the order completes", () => {
  // A stop lets the activity under way finish (the engine runs activities uninterruptibly), then nothing else runs
  // until the next start picks the workflow up from the database.
  it.each([2, 3, 4, 5, 6])("stopped while the order shows step %i", async (step) => {
    const since = lab.sandbox.control.requests().length
    const order = await lab.run(placeLabOrder)
    const seen = await lab.run(waitForOrder(order.id, (o) => o.step >= step || o.status !== "provisioning", QUICK))
    expect([seen.status, seen.step >= step]).toEqual(["provisioning", true])
    const stoppedAt = await lab.restart()
    await lab.run(settled(order.id, QUICK))
    const r = await lab.run(remains(order.id, lab.sandbox))
    expectCompleted(r)
    // No step ran twice: one clone, then each of the VM's own calls once, in order.
    expect(r.clones).toBe(1)
    const writes = vmWrites(r.vpsVmid!, since)
    expect(writes.map((w) => w.call)).toEqual(["PUT /resize", "POST /config", "POST /status/start"])
    // The new process picked the workflow up: the last step ran after the restart (unless it was the one under way).
    expect(writes.filter((w) => w.index >= stoppedAt).at(-1)?.call).toBe(seen.step < 6 ? "POST /status/start" : undefined)
    await expectNothingInProgress()
  }, 60_000)

  it("stopped while a failed order is being undone: refunded before, the undo finishes after the restart, once", async () => {
    const since = lab.sandbox.control.requests().length
    const order = await lab.run(placeLabOrder)
    const vmid = await lab.run(vmidOf(order.id, QUICK))
    lab.sandbox.control.inject({ match: { method: "POST", path: calls[5].path(vmid) }, kind: taskFailure })
    // The undo stops the VM, then destroys it: stop the application as soon as the VM's stop request arrives.
    const undoing = () => vmWrites(vmid, since).some((w) => w.call === "POST /status/stop")
    const deadline = Date.now() + 20_000
    while (!undoing() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(undoing()).toBe(true)
    // The customer was told and refunded first; the undo is under way.
    const before = await lab.run(remains(order.id, lab.sandbox))
    expect([before.order.status, before.ledger]).toEqual(["failed", ["charge", "refund"]])
    await lab.restart()
    await lab.run(cleanedUp(order.id, QUICK))
    expectCleanFailure(await lab.run(remains(order.id, lab.sandbox)), calls[5].reason)
    expect(vmWrites(vmid, since).map((w) => w.call)).toEqual(["PUT /resize", "POST /config", "POST /status/stop", "DELETE"])
    await expectNothingInProgress()
  }, 60_000)
})

describe("after all of it", () => {
  it("only the completed orders' VMs, addresses and VMIDs remain, and nothing is reserved or in progress", async () => {
    const c = await lab.run(census(lab.sandbox))
    expect(c.unfinished).toBe(0)
    expect(c.reservations).toBe(0)
    expect(c.vms).toEqual(c.vpsVmids)
    expect(c.heldVmids).toEqual(c.vpsVmids)
    expect(c.heldAddresses).toBe(c.vpsVmids.length)
  })
})
