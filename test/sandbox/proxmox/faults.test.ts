// Specification of fault injection on the sandbox PVE: injected statuses in PVE's error shape (59x included), hangs,
// dropped connections and failing tasks, each firing as many times as asked.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { cloneVm, field, type Pve, startSandbox, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let pve: Pve

beforeAll(async () => {
  sandbox = await startSandbox()
  pve = tokenClient(sandbox.url)
})
afterEach(() => sandbox.control.clearFaults())
afterAll(() => sandbox.close())

describe("status faults", () => {
  it("answer with the status, PVE's error body and the message as status line, once by default", async () => {
    sandbox.control.inject({ match: { path: /\/cluster\/resources$/ }, kind: { _tag: "status", status: 500, message: "cfs-lock timeout" } })
    const failed = await pve.get("/cluster/resources")
    expect(failed.status).toBe(500)
    expect(failed.statusText).toBe("cfs-lock timeout")
    expect(failed.json).toEqual({ data: null, message: "cfs-lock timeout\n" })
    expect((await pve.get("/cluster/resources")).status).toBe(200)
  })

  it("give 596 'Connection timed out' for proxy timeouts, matching the method too", async () => {
    sandbox.control.inject({ match: { method: "GET", path: /\/nodes$/ }, kind: { _tag: "status", status: 596 }, times: 2 })
    const first = await pve.get("/nodes")
    expect(first.status).toBe(596)
    expect(first.statusText).toBe("Connection timed out")
    expect((await pve.get("/nodes")).status).toBe(596)
    expect((await pve.get("/nodes")).status).toBe(200)
  })

  it("are gone after clearFaults", async () => {
    sandbox.control.inject({ match: { path: /version/ }, kind: { _tag: "status", status: 503 }, times: 10 })
    sandbox.control.clearFaults()
    expect((await pve.get("/version")).status).toBe(200)
  })
})

describe("transport faults", () => {
  it("hang: the request never gets an answer", async () => {
    sandbox.control.inject({ match: { path: /\/version$/ }, kind: { _tag: "hang" } })
    const started = Date.now()
    await expect(fetch(`${sandbox.url}/api2/json/version`, {
      headers: { Authorization: "PVEAPIToken=root@pam!zh=x" },
      signal: AbortSignal.timeout(300)
    })).rejects.toThrow()
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    expect((await pve.get("/version")).status).toBe(200)
  })

  it("dropConnection: the socket is destroyed mid-request", async () => {
    sandbox.control.inject({ match: { method: "POST", path: /\/clone$/ }, kind: { _tag: "dropConnection" } })
    await expect(pve.post("/nodes/pve1/qemu/9000/clone", { newid: 500, full: 1 })).rejects.toThrow()
    expect(sandbox.control.state().vms.some((v) => v.vmid === 500)).toBe(false)
  })
})

describe("task failures", () => {
  it("let the call succeed and stop its task with the given exit status and an explaining log", async () => {
    sandbox.control.inject({
      match: { path: /\/qemu\/9000\/clone$/ },
      kind: { _tag: "taskFailure", exitStatus: "clone failed: can't lock file '/var/lock/pve-manager/pve-storage-local-lvm' - got timeout" }
    })
    const answer = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 510, full: 1 })
    expect(answer.status).toBe(200)
    const task = await pve.waitTask(answer.data)
    expect(task.exitstatus).toBe("clone failed: can't lock file '/var/lock/pve-manager/pve-storage-local-lvm' - got timeout")
    expect(task.log.slice(-2)).toEqual([task.exitstatus, `TASK ERROR: ${task.exitstatus}`])
    expect(sandbox.control.state().vms.some((v) => v.vmid === 510)).toBe(false)
    await cloneVm(pve, 510)
  })

  it("are not used up by calls that fail before forking a task", async () => {
    sandbox.control.inject({ match: { path: /\/status\/start$/ }, kind: { _tag: "taskFailure", exitStatus: "start failed: QEMU exited with code 1" } })
    const refused = await pve.post("/nodes/pve1/qemu/510/status/start", { bogus: 1 })
    expect(refused.status).toBe(400)
    const answer = await pve.post("/nodes/pve1/qemu/510/status/start")
    expect((await pve.waitTask(answer.data)).exitstatus).toBe("start failed: QEMU exited with code 1")
    const status = await pve.get("/nodes/pve1/qemu/510/status/current")
    expect(field(status.data, "status")).toBe("stopped")
  })

  it("treat a WARNINGS exit status as success with the work done", async () => {
    sandbox.control.inject({ match: { path: /\/status\/start$/ }, kind: { _tag: "taskFailure", exitStatus: "WARNINGS: 1" } })
    const answer = await pve.post("/nodes/pve1/qemu/510/status/start")
    const task = await pve.waitTask(answer.data)
    expect(task.exitstatus).toBe("WARNINGS: 1")
    expect(task.log.at(-1)).toBe("TASK WARNINGS: 1")
    expect(sandbox.control.state().vms.find((v) => v.vmid === 510)?.status).toBe("running")
  })
})
