// Specification of the sandbox PVE under concurrent use (reference/proxmox.md §5.1–5.3, §5.6): the clone lock while a
// slow clone runs, VMID races, storage running out, config flocks, and addressing a VM on the wrong node.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { cloneVm, field, type Pve, startSandbox, TOKEN, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let pve: Pve

const GiB = 1024 ** 3

beforeAll(async () => {
  sandbox = await startSandbox({
    tokens: [TOKEN],
    taskDurations: { default: 0, qmclone: 400, resize: 300 },
    nodes: [
      { name: "pve1", cpus: 8, memoryBytes: 32 * GiB, storage: [{ id: "local-lvm", totalBytes: 100 * GiB }] },
      { name: "small", cpus: 4, memoryBytes: 8 * GiB, storage: [{ id: "local-lvm", totalBytes: 25 * GiB }] }
    ],
    templates: [
      { vmid: 9000, node: "pve1", name: "debian-12", diskBytes: 10 * GiB },
      { vmid: 9200, node: "small", name: "debian-12", diskBytes: 10 * GiB }
    ]
  })
  pve = tokenClient(sandbox.url)
})
afterAll(() => sandbox.close())

const stateOf = (vmid: number) => sandbox.control.state().vms.find((v) => v.vmid === vmid)

describe("while a slow clone runs", () => {
  it("the new VM exists with lock 'clone' and refuses every write until the task is done", async () => {
    const answer = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 300, name: "slow", full: 1 })
    expect(answer.status).toBe(200)
    expect(stateOf(300)?.lock).toBe("clone")
    const running = await pve.get(`/nodes/pve1/tasks/${encodeURIComponent(String(answer.data))}/status`)
    expect(field(running.data, "status")).toBe("running")
    expect(field(running.data, "exitstatus")).toBeUndefined()
    const resources = await pve.get("/cluster/resources", { type: "vm" })
    const entry = Array.isArray(resources.data) ? resources.data.find((v) => field(v, "vmid") === 300) : undefined
    expect(field(entry, "lock")).toBe("clone")

    const put = await pve.put("/nodes/pve1/qemu/300/config", { cores: 2 })
    expect(put.status).toBe(500)
    expect(put.statusText).toBe("VM is locked (clone)")
    const post = await pve.post("/nodes/pve1/qemu/300/config", { cores: 2 })
    expect(post.statusText).toBe("VM is locked (clone)")
    const start = await pve.post("/nodes/pve1/qemu/300/status/start")
    expect((await pve.waitTask(start.data)).exitstatus).toBe("VM is locked (clone)")
    const resize = await pve.put("/nodes/pve1/qemu/300/resize", { disk: "scsi0", size: "+1G" })
    expect((await pve.waitTask(resize.data)).exitstatus).toBe("VM is locked (clone)")

    expect((await pve.waitTask(answer.data)).exitstatus).toBe("OK")
    expect(stateOf(300)?.lock).toBeNull()
    expect((await pve.put("/nodes/pve1/qemu/300/config", { cores: 2 })).status).toBe(200)
  })
})

describe("VMID races", () => {
  it("nextid reserves nothing: two clients get the same id and the second clone fails synchronously", async () => {
    const [a, b] = await Promise.all([pve.get("/cluster/nextid"), pve.get("/cluster/nextid")])
    expect(a.data).toBe(b.data)
    const id = Number(a.data)
    const [first, second] = await Promise.all([
      pve.post("/nodes/pve1/qemu/9000/clone", { newid: id, full: 1 }),
      pve.post("/nodes/pve1/qemu/9000/clone", { newid: id, full: 1 })
    ])
    const statuses = [first.status, second.status].sort()
    expect(statuses).toEqual([200, 500])
    const loser = first.status === 500 ? first : second
    expect(field(loser.json, "message")).toBe(`unable to create VM ${id}: config file already exists\n`)
    expect((await pve.get("/cluster/nextid", { vmid: id })).status).toBe(400)
    await pve.waitTask((first.status === 200 ? first : second).data)
  })
})

describe("capacity", () => {
  it("fails a clone inside its task when the node's storage lacks space, and removes the half-made VM", async () => {
    await cloneVm(pve, 310, { node: "small", template: 9200 })
    const answer = await pve.post("/nodes/small/qemu/9200/clone", { newid: 311, full: 1 })
    expect(answer.status).toBe(200)
    const task = await pve.waitTask(answer.data)
    expect(task.exitstatus).toMatch(/^clone failed: .*insufficient free space/)
    expect(task.log.at(-1)).toBe(`TASK ERROR: ${task.exitstatus}`)
    expect(stateOf(311)).toBeUndefined()
    const storage = await pve.get("/nodes/small/storage/local-lvm/status")
    expect(field(storage.data, "avail")).toBe(5 * GiB)
  })

  it("derives each node's committed CPUs and memory from its VMs, stopped ones included", () => {
    const small = sandbox.control.state().nodes.find((n) => n.name === "small")
    expect(small?.committedCpus).toBe(1)
    expect(small?.committedMemoryBytes).toBe(1024 * 1024 * 1024)
  })
})

describe("config flock", () => {
  it("a synchronous config write waits for a running resize instead of failing", async () => {
    await cloneVm(pve, 320)
    const resize = await pve.put("/nodes/pve1/qemu/320/resize", { disk: "scsi0", size: "+2G" })
    const started = Date.now()
    const put = await pve.put("/nodes/pve1/qemu/320/config", { cores: 4 })
    expect(put.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
    expect((await pve.waitTask(resize.data)).exitstatus).toBe("OK")
    expect(stateOf(320)?.cores).toBe(4)
    expect(stateOf(320)?.diskBytes).toBe(12 * GiB)
  })

  it("a config write whose client gives up while it waits for the flock is still carried out, as by a pvedaemon worker", async () => {
    await cloneVm(pve, 321)
    const resize = await pve.put("/nodes/pve1/qemu/321/resize", { disk: "scsi0", size: "+1G" })
    await expect(fetch(`${sandbox.url}/api2/json/nodes/pve1/qemu/321/config`, {
      method: "PUT",
      headers: { Authorization: `PVEAPIToken=${TOKEN.id}=${TOKEN.secret}`, "Content-Type": "application/x-www-form-urlencoded" },
      body: "cores=3",
      signal: AbortSignal.timeout(50)
    })).rejects.toThrow()
    expect(stateOf(321)?.cores).toBe(1)
    expect((await pve.waitTask(resize.data)).exitstatus).toBe("OK")
    await vi.waitFor(() => expect(stateOf(321)?.cores).toBe(3))
  })
})

describe("addressing", () => {
  it("a VM asked of the wrong node is a 500 'does not exist', as for a deleted VM", async () => {
    const answer = await pve.get("/nodes/small/qemu/9000/config")
    expect(answer.status).toBe(500)
    expect(field(answer.json, "message")).toBe("Configuration file 'nodes/small/qemu-server/9000.conf' does not exist\n")
  })

  it("an unknown node cannot be proxied to", async () => {
    const answer = await pve.get("/nodes/pve9/qemu/9000/status/current")
    expect(answer.status).toBe(500)
    expect(answer.statusText).toMatch(/^hostname lookup 'pve9' failed/)
  })

  it("a task asked of another node than its UPID's is 'no such task'", async () => {
    const answer = await pve.post("/nodes/pve1/qemu/320/status/stop")
    const upid = encodeURIComponent(String(answer.data))
    expect((await pve.get(`/nodes/small/tasks/${upid}/status`)).json).toEqual({
      data: null,
      errors: { upid: "no such task" },
      message: "Parameter verification failed.\n"
    })
  })

  it("resetting a stopped VM fails at once with 'not running'", async () => {
    const answer = await pve.post("/nodes/pve1/qemu/320/status/reset")
    expect(answer.status).toBe(500)
    expect(answer.statusText).toBe("VM 320 not running")
  })
})
