// Specification of the sandbox PVE's parameter verification and wire decoding (reference/proxmox.md §2.1–2.2, §3.5):
// PVE's 400 shapes, form booleans, JSON bodies, array parameters, and the sshkeys double-encoding rule.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cloneVm, field, freshVmid, type Pve, startSandbox, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let pve: Pve
let vmid: number

const KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example"
const KEY_B = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC3 bob@laptop"

beforeAll(async () => {
  sandbox = await startSandbox()
  pve = tokenClient(sandbox.url)
  vmid = freshVmid()
  await cloneVm(pve, vmid)
})
afterAll(() => sandbox.close())

const configOf = (id: number) => sandbox.control.state().vms.find((v) => v.vmid === id)?.config ?? {}

describe("PVE's 400 answers", () => {
  it("names an unknown parameter", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { cores: 2, colour: "blue" })
    expect(answer.status).toBe(400)
    expect(answer.statusText).toBe("Parameter verification failed.")
    expect(answer.json).toEqual({
      data: null,
      errors: { colour: "property is not defined in schema and the schema does not allow additional properties" },
      message: "Parameter verification failed.\n"
    })
  })

  it("refuses true/false for a boolean in a form body", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { onboot: "true" })
    expect(answer.status).toBe(400)
    expect(field(answer.json, "errors")).toEqual({ onboot: "type check ('boolean') failed - got 'true'" })
  })

  it("accepts JSON true for a boolean in a JSON body and stores 1", async () => {
    const answer = await pve.call("PUT", `/nodes/pve1/qemu/${vmid}/config`, { json: { onboot: true, cores: 2 } })
    expect(answer.status).toBe(200)
    expect(answer.data).toBeNull()
    expect(configOf(vmid)["onboot"]).toBe("1")
    expect(configOf(vmid)["cores"]).toBe("2")
  })

  it("checks each tag of a pve-tag-list and keeps the list unique and sorted, as listings show it", async () => {
    const bad = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { tags: "zh;not a/tag" })
    expect(bad.status).toBe(400)
    expect(field(bad.json, "errors")).toEqual({ tags: "invalid format - invalid characters in tag\n" })
    const good = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { tags: "zh-order-1a2b,zh ZH;prod" })
    expect(good.status).toBe(200)
    expect(configOf(vmid)["tags"]).toBe("prod;zh;zh-order-1a2b")
    const listed = await pve.get("/cluster/resources", { type: "vm" })
    expect(listed.data).toEqual(expect.arrayContaining([expect.objectContaining({ vmid, tags: "prod;zh;zh-order-1a2b" })]))
    const status = await pve.get(`/nodes/pve1/qemu/${vmid}/status/current`)
    expect(field(status.data, "tags")).toBe("prod;zh;zh-order-1a2b")
  })

  it("checks integers, ranges and required parameters", async () => {
    const notInt = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { cores: "two" })
    expect(field(notInt.json, "errors")).toEqual({ cores: "type check ('integer') failed - got 'two'" })
    const tooSmall = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { cores: 0 })
    expect(field(tooSmall.json, "errors")).toEqual({ cores: "value must have a minimum value of 1" })
    // A VMID's format is checked before its range, as JSONSchema.pm does.
    const badVmid = await pve.post("/nodes/pve1/qemu/9000/clone", { newid: 42 })
    expect(field(badVmid.json, "errors")).toEqual({ newid: "invalid format - value does not look like a valid VM ID\n" })
    const missing = await pve.post("/nodes/pve1/qemu/9000/clone", { name: "x" })
    expect(field(missing.json, "errors")).toEqual({ newid: "property is missing and it is not optional" })
  })

  it("checks enums and named formats", async () => {
    const badDisk = await pve.put(`/nodes/pve1/qemu/${vmid}/resize`, { disk: "hda", size: "+1G" })
    expect(String(field(field(badDisk.json, "errors"), "disk"))).toMatch(/^value 'hda' does not have a value in the enumeration 'ide0, ide1/)
    const badName = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { name: "my_vps" })
    expect(field(badName.json, "errors")).toEqual({ name: "invalid format - value does not look like a valid DNS name\n" })
  })

  it("rejects an index beyond the schema's range", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { serial4: "socket" })
    expect(field(answer.json, "errors")).toEqual({
      serial4: "property is not defined in schema and the schema does not allow additional properties"
    })
  })

  it("rejects a path parameter that is not an integer", async () => {
    const answer = await pve.get("/nodes/pve1/qemu/abc/config")
    expect(field(answer.json, "errors")).toEqual({ vmid: "type check ('integer') failed - got 'abc'" })
  })

  it("refuses a body on DELETE, as pveproxy does", async () => {
    const answer = await pve.call("DELETE", `/nodes/pve1/qemu/${vmid}`, { form: { purge: 1 } })
    expect(answer.status).toBe(501)
    expect(answer.statusText).toBe("Unexpected content for method 'DELETE'")
  })

  it("fails an empty JSON body rather than treating it as no parameters", async () => {
    const answer = await pve.call("POST", `/nodes/pve1/qemu/${vmid}/status/start`, { raw: "", contentType: "application/json" })
    expect(answer.status).toBe(500)
  })
})

describe("sshkeys (percent-encoded once, then form-encoded)", () => {
  it("accepts the double-encoded form body and stores the single-encoded value", async () => {
    const encoded = encodeURIComponent([KEY_A, KEY_B].join("\n"))
    const answer = await pve.post(`/nodes/pve1/qemu/${vmid}/config`, { sshkeys: encoded, ciuser: "root" })
    expect(answer.status).toBe(200)
    expect((await pve.waitTask(answer.data)).exitstatus).toBe("OK")
    const wire = sandbox.control.requests().find((r) => r.method === "POST" && r.path.endsWith(`/qemu/${vmid}/config`))
    expect(wire?.body["sshkeys"]).toBe(encoded)
    expect(wire?.headers["content-type"]).toBe("application/x-www-form-urlencoded")
    expect(configOf(vmid)["sshkeys"]).toBe(encoded)
    const read = await pve.get(`/nodes/pve1/qemu/${vmid}/config`)
    expect(decodeURIComponent(String(field(read.data, "sshkeys")))).toBe(`${KEY_A}\n${KEY_B}`)
  })

  it("accepts the single-encoded value in a JSON body", async () => {
    const encoded = encodeURIComponent(KEY_A)
    const answer = await pve.call("PUT", `/nodes/pve1/qemu/${vmid}/config`, { json: { sshkeys: encoded } })
    expect(answer.status).toBe(200)
    expect(configOf(vmid)["sshkeys"]).toBe(encoded)
  })

  it("refuses a raw key whose spaces survive form decoding", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { sshkeys: KEY_A })
    expect(answer.status).toBe(400)
    expect(field(answer.json, "errors")).toEqual({ sshkeys: `invalid format - invalid urlencoded string: ${KEY_A}\n` })
  })

  it("refuses a '+' for a space, which form decoding turns into a space", async () => {
    const plus = encodeURIComponent(KEY_A).replace(/%20/g, "+")
    const answer = await pve.call("PUT", `/nodes/pve1/qemu/${vmid}/config`, { raw: `sshkeys=${plus}`, contentType: "application/x-www-form-urlencoded" })
    expect(answer.status).toBe(400)
  })

  it("refuses well-encoded text that is not an SSH key", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { sshkeys: encodeURIComponent("hello world") })
    expect(answer.status).toBe(500)
    expect(field(answer.json, "message")).toBe("SSH public key validation error\n")
  })
})

describe("other wire rules", () => {
  it("masks cipassword when reading the config but keeps it for the guest", async () => {
    await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { cipassword: "s3cret-pass" })
    const read = await pve.get(`/nodes/pve1/qemu/${vmid}/config`)
    expect(field(read.data, "cipassword")).toBe("**********")
    expect(configOf(vmid)["cipassword"]).toBe("s3cret-pass")
  })

  it("regenerates nothing but adds a MAC to a NIC given without one", async () => {
    await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { net0: "virtio,bridge=vmbr1,firewall=1" })
    expect(configOf(vmid)["net0"]).toMatch(/^virtio=BC:24:11:[0-9A-F]{2}:[0-9A-F]{2}:[0-9A-F]{2},bridge=vmbr1,firewall=1$/)
  })

  it("returns integers as numbers and property strings as strings", async () => {
    const read = await pve.get(`/nodes/pve1/qemu/${vmid}/config`)
    expect(field(read.data, "cores")).toBe(2)
    expect(field(read.data, "memory")).toBe("1024")
    expect(field(read.data, "digest")).toMatch(/^[0-9a-f]{40}$/)
  })

  it("refuses a stale digest", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { cores: 3, digest: "0".repeat(40) })
    expect(answer.status).toBe(500)
    expect(field(answer.json, "message")).toBe("checksum mismatch (file change by other user?)\n")
  })
})

describe("list parameters", () => {
  it("joins repeated values of a '-list' parameter with commas", async () => {
    await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { description: "temp", tags: "web" })
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { delete: ["description", "tags"] })
    expect(answer.status, answer.text).toBe(200)
    expect(configOf(vmid)["description"]).toBeUndefined()
    expect(configOf(vmid)["tags"]).toBeUndefined()
  })

  it("refuses to delete an option it does not know", async () => {
    const answer = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { delete: "colour" })
    expect(field(answer.json, "errors")).toEqual({ delete: "unknown option 'colour'" })
  })
})
