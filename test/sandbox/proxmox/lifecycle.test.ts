// Specification of a VPS's life on the sandbox PVE with instant tasks (reference/proxmox.md §3, §7): clone, configure,
// resize, start, inspect, snapshot, guest agent, stop, destroy — and the capacity each step takes or gives back.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { field, type Pve, startSandbox, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let pve: Pve

const GiB = 1024 ** 3
const VMID = 4242

beforeAll(async () => {
  sandbox = await startSandbox()
  pve = tokenClient(sandbox.url)
})
afterAll(() => sandbox.close())

const vm = () => sandbox.control.state().vms.find((v) => v.vmid === VMID)
const pve1 = () => sandbox.control.state().nodes.find((n) => n.name === "pve1")
const pve1Storage = () => pve1()?.storage.find((s) => s.id === "local-lvm")?.usedBytes ?? -1

const expectOk = async (answer: { readonly status: number; readonly data: unknown; readonly text: string }) => {
  expect(answer.status, answer.text).toBe(200)
  const task = await pve.waitTask(answer.data)
  expect(task.exitstatus, task.log.join("\n")).toBe("OK")
  return task
}

describe("the life of a VPS with instant tasks", () => {
  it("starts from the default cluster: two nodes, templates on both", async () => {
    const nodes = await pve.get("/nodes")
    expect(Array.isArray(nodes.data) ? nodes.data.map((n) => field(n, "node")) : []).toEqual(["pve1", "pve2"])
    const vms = await pve.get("/cluster/resources", { type: "vm" })
    const templates = Array.isArray(vms.data) ? vms.data.filter((v) => field(v, "template") === 1) : []
    expect(templates.map((t) => [field(t, "vmid"), field(t, "node"), field(t, "name")])).toEqual([
      [9000, "pve1", "debian-12"],
      [9001, "pve1", "ubuntu-24-04"],
      [9100, "pve2", "debian-12"],
      [9101, "pve2", "ubuntu-24-04"]
    ])
    expect(field(templates[0], "maxdisk")).toBe(10 * GiB)
  })

  it("confirms a free VMID with nextid", async () => {
    expect((await pve.get("/cluster/nextid")).data).toBe(100)
    expect((await pve.get("/cluster/nextid", { vmid: VMID })).data).toBe(VMID)
  })

  it("clones the template: new MAC, no template flag, storage taken", async () => {
    const before = pve1Storage()
    const answer = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: VMID, name: "web-1", full: 1, storage: "local-lvm" })
    expect(String(answer.data)).toMatch(/^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:qmclone:9000:root@pam!zh:$/)
    await expectOk(answer)
    const clone = vm()
    const template = sandbox.control.state().vms.find((v) => v.vmid === 9000)
    expect(clone?.template).toBe(false)
    expect(clone?.lock).toBeNull()
    expect(clone?.config["scsi0"]).toBe("local-lvm:vm-4242-disk-0,size=10G")
    expect(clone?.config["net0"]).not.toBe(template?.config["net0"])
    expect(pve1Storage() - before).toBe(10 * GiB)
  })

  it("refuses the same VMID again, synchronously", async () => {
    const answer = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: VMID, full: 1 })
    expect(answer.status).toBe(500)
    expect(answer.statusText).toBe(`unable to create VM ${VMID}: config file already exists`)
    const taken = await pve.get("/cluster/nextid", { vmid: VMID })
    expect(taken.status).toBe(400)
    expect(field(taken.json, "errors")).toEqual({ vmid: `VM ${VMID} already exists` })
  })

  it("configures CPU, memory, network and cloud-init asynchronously", async () => {
    await expectOk(await pve.post(`/nodes/pve1/qemu/${VMID}/config`, {
      cores: 2,
      sockets: 1,
      memory: 2048,
      net0: "virtio,bridge=vmbr0",
      ipconfig0: "ip=203.0.113.10/24,gw=203.0.113.1",
      nameserver: "1.1.1.1 9.9.9.9",
      ciuser: "root",
      cipassword: "correct-horse",
      ciupgrade: 0,
      serial0: "socket",
      vga: "serial0",
      agent: 1
    }))
    const config = vm()?.config ?? {}
    expect(config["ipconfig0"]).toBe("ip=203.0.113.10/24,gw=203.0.113.1")
    expect(config["serial0"]).toBe("socket")
    expect(vm()?.cores).toBe(2)
    expect(vm()?.memory).toBe(2048)
    expect(pve1()?.committedCpus).toBe(2)
    expect(pve1()?.committedMemoryBytes).toBe(2048 * 1024 * 1024)
  })

  it("grows the disk to an absolute size", async () => {
    const before = pve1Storage()
    const task = await expectOk(await pve.put(`/nodes/pve1/qemu/${VMID}/resize`, { disk: "scsi0", size: "20G" }))
    expect(task.log.some((l) => l.includes("successfully resized"))).toBe(true)
    expect(vm()?.diskBytes).toBe(20 * GiB)
    expect(pve1Storage() - before).toBe(10 * GiB)
    const storage = await pve.get("/nodes/pve1/storage/local-lvm/status")
    expect(field(storage.data, "used")).toBe(pve1Storage())
    expect(field(storage.data, "avail")).toBe(2 * 1024 * GiB - pve1Storage())
  })

  it("fails a shrink inside the task", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${VMID}/resize`, { disk: "scsi0", size: "15G" })
    expect(answer.status).toBe(200)
    expect((await pve.waitTask(answer.data)).exitstatus).toBe("shrinking disks is not supported")
  })

  it("starts the VM and reports it through status/current and the resources", async () => {
    await expectOk(await pve.post(`/nodes/pve1/qemu/${VMID}/status/start`))
    const status = await pve.get(`/nodes/pve1/qemu/${VMID}/status/current`)
    expect(field(status.data, "status")).toBe("running")
    expect(field(status.data, "agent")).toBe(1)
    expect(field(status.data, "maxmem")).toBe(2048 * 1024 * 1024)
    expect(field(status.data, "maxdisk")).toBe(20 * GiB)
    const again = await pve.post(`/nodes/pve1/qemu/${VMID}/status/start`)
    expect((await pve.waitTask(again.data)).exitstatus).toBe(`VM ${VMID} already running`)
  })

  it("runs commands through the guest agent", async () => {
    const exec = await pve.post(`/nodes/pve1/qemu/${VMID}/agent/exec`, { command: ["cloud-init", "status", "--wait"] })
    const pid = field(exec.data, "pid")
    expect(typeof pid).toBe("number")
    const status = await pve.get(`/nodes/pve1/qemu/${VMID}/agent/exec-status`, { pid: Number(pid) })
    expect(status.data).toEqual({ exited: 1, exitcode: 0, "out-data": "status: done\n" })
    const hostname = await pve.call("POST", `/nodes/pve1/qemu/${VMID}/agent/exec`, { json: { command: ["cat", "/etc/hostname"] } })
    const out = await pve.get(`/nodes/pve1/qemu/${VMID}/agent/exec-status`, { pid: Number(field(hostname.data, "pid")) })
    expect(field(out.data, "out-data")).toBe("web-1\n")
    const unknown = await pve.post(`/nodes/pve1/qemu/${VMID}/agent/exec`, { command: "frobnicate" })
    const failed = await pve.get(`/nodes/pve1/qemu/${VMID}/agent/exec-status`, { pid: Number(field(unknown.data, "pid")) })
    expect(field(failed.data, "exited")).toBe(1)
    expect(field(failed.data, "exitcode")).not.toBe(0)
    expect(String(field(failed.data, "err-data"))).toContain("frobnicate")
  })

  it("answers 'QEMU guest agent is not running' while the agent is down", async () => {
    sandbox.control.setAgentRunning(VMID, false)
    const answer = await pve.post(`/nodes/pve1/qemu/${VMID}/agent/set-user-password`, { username: "root", password: "another-pass" })
    expect(answer.status).toBe(500)
    expect(answer.statusText).toBe("QEMU guest agent is not running")
    sandbox.control.setAgentRunning(VMID, true)
    expect((await pve.post(`/nodes/pve1/qemu/${VMID}/agent/set-user-password`, { username: "root", password: "another-pass" })).data)
      .toEqual({ result: {} })
  })

  it("takes, lists and deletes a snapshot", async () => {
    await expectOk(await pve.post(`/nodes/pve1/qemu/${VMID}/snapshot`, { snapname: "before-upgrade", description: "safety net" }))
    const list = await pve.get(`/nodes/pve1/qemu/${VMID}/snapshot`)
    const names = Array.isArray(list.data) ? list.data.map((s) => field(s, "name")) : []
    expect(names).toEqual(["before-upgrade", "current"])
    expect(field(Array.isArray(list.data) ? list.data[1] : undefined, "parent")).toBe("before-upgrade")
    const duplicate = await pve.post(`/nodes/pve1/qemu/${VMID}/snapshot`, { snapname: "before-upgrade" })
    expect((await pve.waitTask(duplicate.data)).exitstatus).toBe("snapshot name 'before-upgrade' already used")
    await expectOk(await pve.del(`/nodes/pve1/qemu/${VMID}/snapshot/before-upgrade`))
    expect(vm()?.snapshots).toEqual([])
  })

  it("refuses to destroy a running VM, then stops and destroys it, giving the capacity back", async () => {
    const refused = await pve.del(`/nodes/pve1/qemu/${VMID}`, { purge: 1, "destroy-unreferenced-disks": 1 })
    expect(refused.status).toBe(500)
    expect(refused.statusText).toBe(`VM ${VMID} is running - destroy failed`)
    await expectOk(await pve.post(`/nodes/pve1/qemu/${VMID}/status/stop`))
    const before = pve1Storage()
    await expectOk(await pve.del(`/nodes/pve1/qemu/${VMID}`, { purge: 1, "destroy-unreferenced-disks": 1 }))
    expect(vm()).toBeUndefined()
    expect(before - pve1Storage()).toBe(20 * GiB)
    expect(pve1()?.committedCpus).toBe(0)
    const gone = await pve.get(`/nodes/pve1/qemu/${VMID}/config`)
    expect(gone.status).toBe(500)
    expect(gone.statusText).toBe(`Configuration file 'nodes/pve1/qemu-server/${VMID}.conf' does not exist`)
  })
})
