// Specification of the sandbox PVE's state file (`keepState` over app/sandbox/StateFile.ts): the VMs outlive a restart (config, disks, power state, snapshots,
// guest passwords, storage use), a task running at save time is settled as documented, an invalid file is set aside
// and reported, and the file is written atomically with mode 0600.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import type { SandboxProxmox, SandboxProxmoxOptions, SandboxVmState } from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { keepPveState } from "../../../app/sandbox/SandboxUpstreams.ts"
import { cloneVm, field, instant, login, type Pve, startSandbox, type StartedSandbox } from "./pveHttp.ts"

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example"
const DEFAULT_VMIDS = [9000, 9001, 9100, 9101]

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sandbox-pve-state-"))
})
afterAll(() => rm(root, { recursive: true, force: true }))

let nextDir = 0
/** A fresh directory and the state file path in it. */
const freshStateFile = async () => {
  const dir = await mkdtemp(join(root, `case-${nextDir++}-`))
  return { dir, file: join(dir, "sandbox-proxmox.json") }
}

const withState = (file: string, warnings: Array<string> = [], options: SandboxProxmoxOptions = instant) =>
  startSandbox({ ...options, keepState: keepPveState(file), onWarning: (message) => warnings.push(message) })

const vmState = (sandbox: SandboxProxmox, vmid: number): SandboxVmState | undefined =>
  sandbox.control.state().vms.find((vm) => vm.vmid === vmid)

const storageUsed = (sandbox: SandboxProxmox, node: string) =>
  sandbox.control.state().nodes.find((n) => n.name === node)?.storage[0]?.usedBytes

const until = async (condition: () => Promise<boolean>, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition still false after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Opens the VM's serial console, logs in (then out) and returns everything printed, shell prompt or refusal. */
const consoleLogin = async (sandbox: SandboxProxmox, pve: Pve, vmid: number, user: string, password: string) => {
  if (pve.credentials._tag !== "ticket") throw new Error("ticket expected")
  const proxy = await pve.post(`/nodes/pve1/qemu/${vmid}/termproxy`)
  expect(proxy.status, proxy.text).toBe(200)
  const port = String(field(proxy.data, "port"))
  const ticket = String(field(proxy.data, "ticket"))
  const url = `${sandbox.url.replace(/^http/, "ws")}/api2/json/nodes/pve1/qemu/${vmid}/vncwebsocket` +
    `?port=${port}&vncticket=${encodeURIComponent(ticket)}`
  const ws = new WebSocket(url, ["binary"], { headers: { Cookie: `PVEAuthCookie=${encodeURIComponent(pve.credentials.ticket)}` } })
  let output = ""
  ws.on("message", (data: Buffer) => {
    output += data.toString("utf8")
  })
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve())
    ws.once("error", reject)
  })
  const waitFor = (text: string) => until(() => Promise.resolve(output.includes(text) || output.includes("Login incorrect")))
  const type = (text: string) => ws.send(Buffer.from(`0:${Buffer.byteLength(text, "utf8")}:${text}`, "utf8"))
  ws.send(Buffer.from(`${String(field(proxy.data, "user"))}:${ticket}\n`, "utf8"))
  await waitFor("starting serial terminal")
  type("\r")
  await waitFor("login: ")
  type(`${user}\r`)
  await waitFor("Password: ")
  type(`${password}\r`)
  await waitFor(`${user}@`)
  // The getty outlives the connection, like a real serial tty: log out so the next login starts at its prompt.
  if (!output.includes("Login incorrect")) {
    type("exit\r")
    await waitFor("logout")
  }
  ws.close()
  return output
}

describe("a VM across a restart", () => {
  const VMID = 300
  let file: string
  let before: SandboxVmState | undefined
  let usedBefore: number | undefined
  let after: StartedSandbox
  let pve: Pve
  const warnings: Array<string> = []

  beforeAll(async () => {
    file = (await freshStateFile()).file
    const first = await withState(file, warnings)
    const client = await login(first.url)
    await cloneVm(client, VMID, { name: "persist-1" })
    const config = await client.put(`/nodes/pve1/qemu/${VMID}/config`, {
      ciuser: "root",
      cipassword: "hunter2-long",
      sshkeys: encodeURIComponent(KEY),
      ipconfig0: "ip=192.0.2.10/24,gw=192.0.2.1",
      serial0: "socket",
      agent: "1",
      cores: 2,
      memory: "2048"
    })
    expect(config.status, config.text).toBe(200)
    const resize = await client.put(`/nodes/pve1/qemu/${VMID}/resize`, { disk: "scsi0", size: "20G" })
    expect((await client.waitTask(resize.data)).exitstatus).toBe("OK")
    expect((await client.waitTask((await client.post(`/nodes/pve1/qemu/${VMID}/status/start`)).data)).exitstatus).toBe("OK")
    const snapshot = await client.post(`/nodes/pve1/qemu/${VMID}/snapshot`, { snapname: "before-upgrade", description: "safe" })
    expect((await client.waitTask(snapshot.data)).exitstatus).toBe("OK")
    const agent = await client.post(`/nodes/pve1/qemu/${VMID}/agent/set-user-password`, { username: "debian", password: "agent-set-9" })
    expect(agent.status, agent.text).toBe(200)
    before = vmState(first, VMID)
    usedBefore = storageUsed(first, "pve1")
    await first.close()

    after = await withState(file, warnings)
    pve = await login(after.url)
  })
  afterAll(() => after.close())

  it("comes back with the same config, cloud-init settings included", () => {
    const restored = vmState(after, VMID)
    expect(restored?.config).toEqual(before?.config)
    expect(restored?.config).toMatchObject({
      ciuser: "root",
      cipassword: "hunter2-long",
      sshkeys: encodeURIComponent(KEY),
      ipconfig0: "ip=192.0.2.10/24,gw=192.0.2.1",
      serial0: "socket",
      agent: "1",
      cores: "2"
    })
    expect(restored?.config["net0"]).toMatch(/^virtio=BC:24:11:[0-9A-F:]{8},bridge=vmbr0$/)
    expect(warnings).toEqual([])
  })

  it("keeps its disk size, power state and the storage it takes", async () => {
    expect(vmState(after, VMID)).toMatchObject({ status: "running", diskBytes: 20 * 1024 ** 3, memory: 2048, lock: null })
    expect(storageUsed(after, "pve1")).toBe(usedBefore)
    const status = await pve.get(`/nodes/pve1/qemu/${VMID}/status/current`)
    expect(field(status.data, "status")).toBe("running")
    expect(field(status.data, "maxdisk")).toBe(20 * 1024 ** 3)
  })

  it("keeps its snapshot, with the config it captured", async () => {
    expect(vmState(after, VMID)?.snapshots).toEqual(before?.snapshots)
    const list = await pve.get(`/nodes/pve1/qemu/${VMID}/snapshot`)
    const names = Array.isArray(list.data) ? list.data.map((s) => field(s, "name")) : []
    expect(names).toEqual(["before-upgrade", "current"])
    const captured = await pve.get(`/nodes/pve1/qemu/${VMID}/config`, { snapshot: "before-upgrade" })
    expect(field(captured.data, "cores")).toBe(2)
  })

  it("lets the console log in with the cloud-init password", async () => {
    const output = await consoleLogin(after, pve, VMID, "root", "hunter2-long")
    expect(output).toContain("root@persist-1:~# ")
  })

  it("keeps the password the guest agent set", async () => {
    const output = await consoleLogin(after, pve, VMID, "debian", "agent-set-9")
    expect(output).toContain("debian@persist-1:~$ ")
  })

  it("still refuses a wrong password at the console", async () => {
    const output = await consoleLogin(after, pve, VMID, "root", "not-it")
    expect(output).toContain("Login incorrect")
  })
})

describe("tasks running when the sandbox stops", () => {
  it("saves a clone in progress as the finished, unlocked clone", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file, [], { ...instant, taskDurations: { default: 0, qmclone: 60_000 } })
    const client = await login(first.url)
    const clone = await client.post("/nodes/pve1/qemu/9000/clone", { newid: 301, name: "half-made", full: 1 })
    expect(clone.status, clone.text).toBe(200)
    expect(vmState(first, 301)?.lock).toBe("clone")
    await first.close()

    const second = await withState(file)
    expect(vmState(second, 301)).toMatchObject({ name: "half-made", lock: null, status: "stopped", diskBytes: 10 * 1024 ** 3 })
    await second.close()
  })

  it("saves a VM whose snapshot is in progress unlocked, without the snapshot", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file, [], { ...instant, taskDurations: { default: 0, qmsnapshot: 60_000 } })
    const client = await login(first.url)
    await cloneVm(client, 302)
    await client.post("/nodes/pve1/qemu/302/snapshot", { snapname: "pending-one" })
    expect(vmState(first, 302)?.lock).toBe("snapshot")
    await first.close()

    const second = await withState(file)
    expect(vmState(second, 302)).toMatchObject({ lock: null, snapshots: [] })
    await second.close()
  })

  it("saves a VM being destroyed as destroyed, its neighbours kept", async () => {
    const { file } = await freshStateFile()
    const first = await withState(file, [], { ...instant, taskDurations: { default: 0, qmdestroy: 60_000 } })
    const client = await login(first.url)
    await cloneVm(client, 304)
    await cloneVm(client, 305)
    expect((await client.del("/nodes/pve1/qemu/304")).status).toBe(200)
    await until(() => Promise.resolve(vmState(first, 304)?.lock === "destroyed"))
    await first.close()

    const second = await withState(file)
    expect(vmState(second, 304)).toBeUndefined()
    expect(vmState(second, 305)).toMatchObject({ lock: null })
    await second.close()
  })
})

describe("an invalid state file", () => {
  const invalid = [
    ["text that is not JSON", "{ this is not json"],
    ["a document of another shape", JSON.stringify({ format: "sandbox-proxmox-state", version: 1, vms: [{ vmid: "x" }] })],
    [
      "a VM on a node the sandbox lacks",
      JSON.stringify({
        format: "sandbox-proxmox-state",
        version: 1,
        vms: [{
          vmid: 400, node: "pve9", status: "stopped", startedAt: null, imageUser: "debian", config: { name: "x" },
          snapshots: [], guest: { hostname: "x", passwords: {} }
        }]
      })
    ]
  ] as const

  it.each(invalid)("is moved aside and reported when it holds %s; the sandbox starts with its default VMs", async (_, text) => {
    const { dir, file } = await freshStateFile()
    await writeFile(file, text)
    const warnings: Array<string> = []
    const sandbox = await withState(file, warnings)
    expect(sandbox.control.state().vms.map((vm) => vm.vmid)).toEqual(DEFAULT_VMIDS)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`state file ${file} is invalid`)
    const aside = (await readdir(dir)).filter((name) => name.startsWith("sandbox-proxmox.json.invalid-"))
    expect(aside).toHaveLength(1)
    expect(await readFile(join(dir, aside[0] ?? ""), "utf8")).toBe(text)
    await sandbox.close()
    const rewritten: unknown = JSON.parse(await readFile(file, "utf8"))
    expect(field(rewritten, "format")).toBe("sandbox-proxmox-state")
  })

  it("is a clear error when it exists but cannot be read", async () => {
    const { dir } = await freshStateFile()
    await expect(withState(dir)).rejects.toThrow(`sandbox PVE: cannot read state file ${dir}`)
  })
})

describe("the state file itself", () => {
  it("starts the default VMs when there is no file yet", async () => {
    const { file } = await freshStateFile()
    const warnings: Array<string> = []
    const sandbox = await withState(file, warnings)
    expect(sandbox.control.state().vms.map((vm) => vm.vmid)).toEqual(DEFAULT_VMIDS)
    expect(warnings).toEqual([])
    await sandbox.close()
  })

  it("is written soon after a change, before close, readable by its owner only, with no temp file left", async () => {
    const { dir, file } = await freshStateFile()
    const sandbox = await withState(file)
    const client = await login(sandbox.url)
    await cloneVm(client, 303)
    await until(async () => (await readFile(file, "utf8").catch(() => "")).includes("\"vmid\": 303"))
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(await readdir(dir)).toEqual(["sandbox-proxmox.json"])
    await sandbox.close()
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })
})
