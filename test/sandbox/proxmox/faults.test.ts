// Specification of fault injection on the sandbox PVE: injected statuses in PVE's error shape (59x included), hangs,
// dropped and reset connections, late answers, answers lost after the call ran and failing tasks, each firing as many times as asked; and the
// request log's arrival times.
import { connect } from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { cloneVm, field, type Pve, startSandbox, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let pve: Pve

/** How a raw HTTP/1.1 GET of `path` ends: its status line, or the connection's error code, or "closed". */
const rawGet = (path: string) =>
  new Promise<string>((resolve) => {
    const socket = connect(Number(new URL(sandbox.url).port), "127.0.0.1")
    let text = ""
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1")
    })
    socket.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"))
    socket.on("close", () => resolve(text === "" ? "closed" : text.split("\r\n")[0] ?? ""))
    socket.write(`GET /api2/json${path} HTTP/1.1\r\nHost: pve\r\nAuthorization: PVEAPIToken=root@pam!zh=x\r\nConnection: close\r\n\r\n`)
  })

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

  it("carry parameter errors as PVE's 400 does (a UPID read before its log exists)", async () => {
    sandbox.control.inject({
      match: { path: /\/tasks\/[^/]+\/status$/ },
      kind: { _tag: "status", status: 400, message: "Parameter verification failed.", errors: { upid: "no such task" } }
    })
    const upid = (await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 520, full: 1 })).data
    const refused = await pve.get(`/nodes/pve1/tasks/${encodeURIComponent(String(upid))}/status`)
    expect(refused.status).toBe(400)
    expect(refused.statusText).toBe("Parameter verification failed.")
    expect(refused.json).toEqual({ data: null, errors: { upid: "no such task" }, message: "Parameter verification failed.\n" })
    expect((await pve.waitTask(upid)).exitstatus).toBe("OK")
    await pve.waitTask((await pve.del("/nodes/pve1/qemu/520")).data)
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

  it("dropConnection closes the connection; reset resets it", async () => {
    const logged = () => sandbox.control.requests().filter((r) => r.path === "/api2/json/version").length
    const before = logged()
    sandbox.control.inject({ match: { path: /\/version$/ }, kind: { _tag: "dropConnection" } })
    expect(await rawGet("/version")).toBe("closed")
    sandbox.control.inject({ match: { path: /\/version$/ }, kind: { _tag: "reset" } })
    expect(await rawGet("/version")).toBe("ECONNRESET")
    expect(logged() - before).toBe(2)
    expect(await rawGet("/version")).toBe("HTTP/1.1 401 Authentication failed!")
  })

  it("delay: the call is carried out and answered as usual, that much later", async () => {
    sandbox.control.inject({ match: { method: "POST", path: /\/clone$/ }, kind: { _tag: "delay", ms: 300 } })
    const started = Date.now()
    const answer = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 501, full: 1 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    expect(answer.status).toBe(200)
    expect(String(answer.data)).toMatch(/^UPID:pve1:.*:qmclone:/)
    expect(sandbox.control.state().vms.some((v) => v.vmid === 501)).toBe(true)
    const quick = Date.now()
    expect((await pve.get("/version")).status).toBe(200)
    expect(Date.now() - quick).toBeLessThan(250)
  })
})

describe("lost answers", () => {
  it("carry the call out, then answer the status instead of its result", async () => {
    sandbox.control.inject({
      match: { method: "POST", path: /\/clone$/ },
      kind: { _tag: "answerLost", status: 596, message: "Connection timed out" }
    })
    const lost = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 530, full: 1, name: "lost-answer" })
    expect(lost.status).toBe(596)
    expect(lost.json).toEqual({ data: null, message: "Connection timed out\n" })
    // The clone runs all the same: the VM exists (locked while its task runs), and its task finishes.
    const lastClone = () => sandbox.control.state().tasks.filter((t) => t.type === "qmclone").at(-1)
    const clone = lastClone()
    expect(sandbox.control.state().vms.find((v) => v.vmid === 530)?.name).toBe("lost-answer")
    expect((await pve.waitTask(clone?.upid)).exitstatus).toBe("OK")
    // Once.
    expect((await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 531, full: 1 })).status).toBe(200)
    await pve.waitTask(lastClone()?.upid)
    for (const vmid of [530, 531]) await pve.waitTask((await pve.del(`/nodes/pve1/qemu/${vmid}`)).data)
  })

  it("leave calls that fail before they run as they are", async () => {
    sandbox.control.inject({ match: { method: "POST", path: /\/clone$/ }, kind: { _tag: "answerLost", status: 596 } })
    const refused = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 9001, full: 1 })
    expect(refused.status).toBe(500)
    expect(refused.json).toMatchObject({ data: null, message: expect.stringContaining("already exists") })
    expect((await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 540, full: 1 })).status).toBe(596)
    await pve.waitTask(sandbox.control.state().tasks.filter((t) => t.type === "qmclone").at(-1)?.upid)
    await pve.waitTask((await pve.del("/nodes/pve1/qemu/540")).data)
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

  it("write the given log lines before the exit status", async () => {
    sandbox.control.inject({
      match: { path: /\/qemu\/9000\/clone$/ },
      kind: { _tag: "taskFailure", exitStatus: "clone failed: command 'qemu-img convert' failed: exit code 1", log: ["create full clone of drive scsi0", "transferred 1.0 GiB of 10.0 GiB (10.00%)"] }
    })
    const task = await pve.waitTask((await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 511, full: 1 })).data)
    expect(task.log.slice(-4)).toEqual([
      "create full clone of drive scsi0",
      "transferred 1.0 GiB of 10.0 GiB (10.00%)",
      task.exitstatus,
      `TASK ERROR: ${task.exitstatus}`
    ])
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

describe("the request log", () => {
  it("dates every request on the sandbox's clock", async () => {
    const before = sandbox.control.now()
    await pve.get("/version")
    sandbox.control.advanceClock(60_000)
    await pve.get("/version")
    const [first, second] = sandbox.control.requests().filter((r) => r.path === "/api2/json/version").slice(-2)
    expect(first?.at).toBeGreaterThanOrEqual(before)
    expect(first?.at).toBeLessThanOrEqual(before + 5_000)
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(60_000)
    expect(second?.at).toBeLessThanOrEqual(sandbox.control.now())
  })
})
