// Every request the Proxmox wrapper can send, built by the adapter's own builders and encoded by its own wire encoder,
// is accepted by Proxmox's API schema; and the check itself catches a wrong name, type or missing parameter.
import { assert, describe, it } from "@effect/vitest"
import type { ProxmoxRequest } from "../../../adapters/proxmox/encoding.ts"
import { type RequestBuilders, requests } from "../../../adapters/proxmox/requests.ts"
import { loadApiIndex, problemsWith, readApidoc } from "./apiSchema.ts"

const text = readApidoc()
const index = loadApiIndex(text)

const vm = { node: "pve1", vmid: 101 }
const upid = "UPID:pve1:0003A1F2:01B2C3D4:6650A1B2:qmclone:9000:svc@pve!prov:"

/** One or more sample calls per builder; the mapped type makes a new builder without samples a compile error. */
const samples: { readonly [K in keyof RequestBuilders]: ReadonlyArray<ProxmoxRequest> } = {
  ticket: [requests.ticket("svc@pve", "s3cret"), requests.ticket("svc@pve", "PVE:svc@pve:6650A1B2::c2lnbmF0dXJl")],
  clusterResources: [
    requests.clusterResources("vm"),
    requests.clusterResources("node"),
    requests.clusterResources("storage")
  ],
  nextId: [requests.nextId(100), requests.nextId(999_999_999)],
  clone: [requests.clone({ node: "pve1", vmid: 9000 }, 101, "vps-101", "local-lvm", "0b8f5c1e-2d3a-4f6b-9c7d-8e9f0a1b2c3d")],
  config: [requests.config(vm)],
  setOnBoot: [requests.setOnBoot(vm, false), requests.setOnBoot(vm, true)],
  configure: [
    requests.configure(vm, {
      stamp: "0b8f5c1e-2d3a-4f6b-9c7d-8e9f0a1b2c3d",
      cores: 2,
      memoryMiB: 2048,
      bridge: "vmbr0",
      address: "203.0.113.10/28",
      gateway: "203.0.113.1",
      nameservers: ["1.1.1.1", "9.9.9.9"],
      user: "root",
      password: "hunter2 with spaces",
      sshPublicKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9vb28= ann@laptop", "ssh-rsa AAAAB3NzaC1yc2E+/= bob"],
      hostname: "web-1.example.com"
    })
  ],
  setCloudInitPassword: [requests.setCloudInitPassword(vm, "n3w password")],
  resize: [requests.resize(vm, 20), requests.resize(vm, 1024)],
  power: [
    requests.power(vm, "start"),
    requests.power(vm, "stop"),
    requests.power(vm, "reset")
  ],
  shutdown: [requests.shutdown(vm, 60), requests.shutdown(vm, 0)],
  statusCurrent: [requests.statusCurrent(vm)],
  listSnapshots: [requests.listSnapshots(vm)],
  createSnapshot: [requests.createSnapshot(vm, "before-upgrade", "taken by the panel")],
  deleteSnapshot: [requests.deleteSnapshot(vm, "before-upgrade")],
  agentExec: [
    requests.agentExec(vm, ["cloud-init", "status", "--wait"], undefined),
    requests.agentExec(vm, ["sh", "-c", "cat > /tmp/x"], "hello\n")
  ],
  agentExecStatus: [requests.agentExecStatus(vm, 4242)],
  setUserPassword: [requests.setUserPassword(vm, "root", "n3w password")],
  destroy: [requests.destroy(vm)],
  termproxy: [requests.termproxy(vm)],
  vncWebSocket: [requests.vncWebSocket(vm, 5900, "PVEVNC:6650A1B2::c2ln+bmF/0dXJl==")],
  taskStatus: [requests.taskStatus("pve1", upid)],
  taskLog: [requests.taskLog("pve1", upid, 0, 50), requests.taskLog("pve1", upid, 180, 20)]
}

describe("Proxmox requests against the API schema", () => {
  for (const [builder, built] of Object.entries(samples)) {
    it(`${builder}: every sample is accepted as sent`, () => {
      assert.isNotEmpty(built)
      for (const request of built) assert.deepStrictEqual(problemsWith(index, request), [])
    })
  }

  it("covers every builder the adapter has", () => {
    assert.deepStrictEqual(Object.keys(samples).sort(), Object.keys(requests).sort())
  })

  it("rejects a misspelt parameter name", () => {
    const clone = requests.clone({ node: "pve1", vmid: 9000 }, 101, "vps-101", "local-lvm", "o-1")
    const { newid, ...rest } = clone.params
    const problems = problemsWith(index, { ...clone, params: { ...rest, newvmid: newid ?? 101 } })
    assert.include(problems.join("\n"), "unknown parameter newvmid")
    assert.include(problems.join("\n"), "missing required newid")
  })

  it("rejects a boolean sent as true/false and a value of the wrong type", () => {
    const problems = problemsWith(index, {
      method: "DELETE",
      pathTemplate: "/nodes/{node}/qemu/{vmid}",
      pathParams: vm,
      params: { purge: "true", "destroy-unreferenced-disks": "1", skiplock: "yes" }
    })
    assert.strictEqual(problems.length, 2)
  })

  it("rejects an unknown path, a wrong method and an unknown property-string key", () => {
    assert.isNotEmpty(problemsWith(index, { method: "GET", pathTemplate: "/cluster/nextids", pathParams: {}, params: {} }))
    assert.isNotEmpty(problemsWith(index, { ...requests.statusCurrent(vm), method: "POST" }))
    assert.isNotEmpty(problemsWith(index, {
      ...requests.setCloudInitPassword(vm, "x"),
      params: { net0: "virtio,bridge=vmbr0,speed=10" }
    }))
  })

  it("rejects SSH keys that were not percent-encoded before the form encoding", () => {
    const problems = problemsWith(index, {
      ...requests.setCloudInitPassword(vm, "x"),
      params: { sshkeys: "ssh-ed25519 AAAA ann@laptop" }
    })
    assert.include(problems.join("\n"), "urlencoded")
  })
})
