// The parameter schema of every endpoint the sandbox serves, hand-copied from Proxmox's own API schema
// (reference/proxmox-apidoc.json, PVE 9.x). test/sandbox/proxmox/apiSchema.test.ts compares this table with that
// file so the two cannot drift; shared/ is not shipped, hence the copy.

export type ParamType = "string" | "integer" | "number" | "boolean" | "array"

export interface ParamSpec {
  readonly type: ParamType
  readonly optional?: true
  readonly minimum?: number
  readonly maximum?: number
  readonly minLength?: number
  readonly maxLength?: number
  /** Anchored by the validator, as JSONSchema.pm does (`m/^$pattern$/`). */
  readonly pattern?: string
  readonly enum?: ReadonlyArray<string>
  /** A named string format (`pve-vmid`, `dns-name`, `urlencoded` …). */
  readonly format?: string
  /** A property string (`net[n]`, `memory` …): the schema describes sub-keys; the validator does not. */
  readonly propertyString?: true
  /** Another parameter that must be present with this one. */
  readonly requires?: string
  /** For `name[n]` entries: the highest index n (PVE registers `name0` … `nameN`). */
  readonly maxIndex?: number
}

export interface EndpointSchema {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  /** Relative to /api2/json, with `{placeholders}` as in the apidoc. */
  readonly path: string
  readonly params: Readonly<Record<string, ParamSpec>>
}

// --- building blocks ---------------------------------------------------------------------------------------------

type Spec = ParamSpec
const opt = (spec: Spec): Spec => ({ ...spec, optional: true })
const str: Spec = { type: "string" }
const int: Spec = { type: "integer" }
const bool: Spec = { type: "boolean", optional: true }
const optStr: Spec = opt(str)
const propString: Spec = { type: "string", optional: true, propertyString: true }
const indexedPropString = (maxIndex: number): Spec => ({ ...propString, maxIndex })
const formatted = (format: string): Spec => ({ type: "string", format })

const node = formatted("pve-node")
const vmid: Spec = { type: "integer", format: "pve-vmid", minimum: 100, maximum: 999999999 }
const storageId = formatted("pve-storage-id")
const snapname: Spec = { ...formatted("pve-configid"), maxLength: 40 }
const upid = str
const vmPath = { node, vmid } as const

const range = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

// --- endpoints ---------------------------------------------------------------------------------------------------

/** `PUT /nodes/{node}/qemu/{vmid}/config`; POST adds `background_delay` and `import-working-storage`. */
const vmConfigParams: Readonly<Record<string, Spec>> = {
  ...vmPath,
  acpi: bool,
  affinity: opt(formatted("pve-cpuset")),
  agent: propString,
  "allow-ksm": bool,
  "amd-sev": opt(formatted("pve-qemu-sev-fmt")),
  arch: opt({ type: "string", enum: ["x86_64", "aarch64"] }),
  args: optStr,
  audio0: propString,
  autostart: bool,
  balloon: opt({ type: "integer", minimum: 0 }),
  bios: opt({ type: "string", enum: ["seabios", "ovmf"] }),
  boot: opt(formatted("pve-qm-boot")),
  bootdisk: opt({ type: "string", pattern: "(ide|sata|scsi|virtio)\\d+", format: "pve-qm-bootdisk" }),
  cdrom: opt(formatted("pve-qm-ide")),
  cicustom: opt(formatted("pve-qm-cicustom")),
  cipassword: optStr,
  citype: opt({ type: "string", enum: ["configdrive2", "nocloud", "opennebula"] }),
  ciupgrade: bool,
  ciuser: optStr,
  cores: opt({ type: "integer", minimum: 1 }),
  cpu: opt(formatted("pve-vm-cpu-conf")),
  cpulimit: opt({ type: "number", minimum: 0, maximum: 128 }),
  cpuunits: opt({ type: "integer", minimum: 1, maximum: 262144 }),
  delete: opt(formatted("pve-configid-list")),
  description: opt({ type: "string", maxLength: 8192 }),
  digest: opt({ type: "string", maxLength: 40 }),
  efidisk0: propString,
  force: { type: "boolean", optional: true, requires: "delete" },
  freeze: bool,
  hookscript: opt(formatted("pve-volume-id")),
  "hostpci[n]": { ...opt(formatted("pve-qm-hostpci")), maxIndex: 15 },
  hotplug: opt(formatted("pve-hotplug-features")),
  hugepages: opt({ type: "string", enum: ["any", "2", "1024"] }),
  "ide[n]": indexedPropString(3),
  "intel-tdx": opt(formatted("pve-qemu-tdx-fmt")),
  "ipconfig[n]": { ...opt(formatted("pve-qm-ipconfig")), maxIndex: 31 },
  ivshmem: propString,
  keephugepages: bool,
  keyboard: opt({
    type: "string",
    enum: ["de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is", "it", "ja",
      "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr"]
  }),
  kvm: bool,
  localtime: bool,
  lock: opt({
    type: "string",
    enum: ["backup", "clone", "create", "migrate", "rollback", "snapshot", "snapshot-delete", "suspending", "suspended"]
  }),
  machine: propString,
  memory: propString,
  migrate_downtime: opt({ type: "number", minimum: 0 }),
  migrate_speed: opt({ type: "integer", minimum: 0 }),
  name: opt(formatted("dns-name")),
  nameserver: opt(formatted("address-list")),
  "net[n]": indexedPropString(31),
  numa: bool,
  "numa[n]": indexedPropString(7),
  onboot: bool,
  ostype: opt({
    type: "string",
    enum: ["other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris"]
  }),
  "parallel[n]": { type: "string", optional: true, pattern: "/dev/parport\\d+|/dev/usb/lp\\d+", maxIndex: 2 },
  protection: bool,
  reboot: bool,
  revert: opt(formatted("pve-configid-list")),
  rng0: opt(formatted("pve-qm-rng")),
  "sata[n]": indexedPropString(5),
  "scsi[n]": indexedPropString(30),
  scsihw: opt({
    type: "string",
    enum: ["lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"]
  }),
  searchdomain: optStr,
  "serial[n]": { type: "string", optional: true, pattern: "(/dev/.+|socket)", maxIndex: 3 },
  shares: opt({ type: "integer", minimum: 0, maximum: 50000 }),
  skiplock: bool,
  smbios1: opt({ ...formatted("pve-qm-smbios1"), maxLength: 512 }),
  smp: opt({ type: "integer", minimum: 1 }),
  sockets: opt({ type: "integer", minimum: 1 }),
  spice_enhancements: propString,
  sshkeys: opt(formatted("urlencoded")),
  startdate: opt({ type: "string", pattern: "(now|\\d{4}-\\d{1,2}-\\d{1,2}(T\\d{1,2}:\\d{1,2}:\\d{1,2})?)" }),
  startup: opt(formatted("pve-startup-order")),
  tablet: bool,
  tags: opt(formatted("pve-tag-list")),
  tdf: bool,
  template: bool,
  tpmstate0: propString,
  "unused[n]": indexedPropString(255),
  "usb[n]": indexedPropString(13),
  vcpus: opt({ type: "integer", minimum: 1 }),
  vga: propString,
  "virtio[n]": indexedPropString(15),
  "virtiofs[n]": indexedPropString(9),
  vmgenid: opt({ type: "string", pattern: "(?:[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}|[01])" }),
  vmstatestorage: opt(storageId),
  watchdog: opt(formatted("pve-qm-watchdog"))
}

const vmConfigPostParams: Readonly<Record<string, Spec>> = {
  ...vmConfigParams,
  background_delay: opt({ type: "integer", minimum: 1, maximum: 30 }),
  "import-working-storage": opt(storageId)
}

const resizeDisks = [...range("ide", 4), ...range("scsi", 31), ...range("virtio", 16), ...range("sata", 6), "efidisk0",
  "tpmstate0"]

export const apiSchema: ReadonlyArray<EndpointSchema> = [
  {
    method: "POST",
    path: "/access/ticket",
    params: {
      "new-format": bool,
      otp: optStr,
      password: str,
      path: { type: "string", optional: true, maxLength: 64, requires: "privs" },
      privs: { type: "string", optional: true, maxLength: 64, requires: "path", format: "pve-priv-list" },
      realm: { type: "string", optional: true, maxLength: 32, format: "pve-realm" },
      "tfa-challenge": optStr,
      username: { type: "string", maxLength: 64 }
    }
  },
  { method: "GET", path: "/version", params: {} },
  {
    method: "GET",
    path: "/cluster/resources",
    params: { type: opt({ type: "string", enum: ["vm", "storage", "node", "sdn"] }) }
  },
  { method: "GET", path: "/cluster/nextid", params: { vmid: opt(vmid) } },
  { method: "GET", path: "/nodes", params: {} },
  { method: "GET", path: "/nodes/{node}/status", params: { node } },
  { method: "GET", path: "/nodes/{node}/storage/{storage}/status", params: { node, storage: storageId } },
  { method: "GET", path: "/nodes/{node}/qemu", params: { node, full: bool } },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/clone",
    params: {
      ...vmPath,
      bwlimit: opt({ type: "integer", minimum: 0 }),
      description: optStr,
      format: opt({ type: "string", enum: ["raw", "qcow2", "vmdk"] }),
      full: bool,
      name: opt(formatted("dns-name")),
      newid: vmid,
      pool: opt(formatted("pve-poolid")),
      snapname: opt(snapname),
      storage: opt(storageId),
      target: opt(node)
    }
  },
  {
    method: "GET",
    path: "/nodes/{node}/qemu/{vmid}/config",
    params: { ...vmPath, current: bool, snapshot: opt(snapname) }
  },
  { method: "POST", path: "/nodes/{node}/qemu/{vmid}/config", params: vmConfigPostParams },
  { method: "PUT", path: "/nodes/{node}/qemu/{vmid}/config", params: vmConfigParams },
  {
    method: "PUT",
    path: "/nodes/{node}/qemu/{vmid}/resize",
    params: {
      ...vmPath,
      digest: opt({ type: "string", maxLength: 40 }),
      disk: { type: "string", enum: resizeDisks },
      size: { type: "string", pattern: "\\+?\\d+(\\.\\d+)?[KMGT]?" },
      skiplock: bool
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/start",
    params: {
      ...vmPath,
      "force-cpu": optStr,
      machine: propString,
      migratedfrom: opt(node),
      migration_network: opt(formatted("CIDR")),
      migration_type: opt({ type: "string", enum: ["secure", "insecure"] }),
      "nets-host-mtu": opt({ type: "string", pattern: "net\\d+=\\d+(,net\\d+=\\d+)*" }),
      skiplock: bool,
      stateuri: opt({ type: "string", maxLength: 128 }),
      targetstorage: opt(formatted("storage-pair-list")),
      timeout: opt({ type: "integer", minimum: 0 }),
      "with-conntrack-state": bool
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/stop",
    params: {
      ...vmPath,
      keepActive: bool,
      migratedfrom: opt(node),
      "overrule-shutdown": bool,
      skiplock: bool,
      timeout: opt({ type: "integer", minimum: 0 })
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/shutdown",
    params: { ...vmPath, forceStop: bool, keepActive: bool, skiplock: bool, timeout: opt({ type: "integer", minimum: 0 }) }
  },
  { method: "POST", path: "/nodes/{node}/qemu/{vmid}/status/reset", params: { ...vmPath, skiplock: bool } },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/status/reboot",
    params: { ...vmPath, timeout: opt({ type: "integer", minimum: 0 }) }
  },
  { method: "GET", path: "/nodes/{node}/qemu/{vmid}/status/current", params: vmPath },
  { method: "GET", path: "/nodes/{node}/qemu/{vmid}/snapshot", params: vmPath },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/snapshot",
    params: { ...vmPath, description: optStr, snapname, vmstate: bool }
  },
  {
    method: "DELETE",
    path: "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}",
    params: { ...vmPath, force: bool, snapname }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/agent/exec",
    params: { ...vmPath, command: { type: "array" }, "input-data": { type: "string", optional: true, maxLength: 65536 } }
  },
  { method: "GET", path: "/nodes/{node}/qemu/{vmid}/agent/exec-status", params: { ...vmPath, pid: int } },
  { method: "POST", path: "/nodes/{node}/qemu/{vmid}/agent/ping", params: vmPath },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/agent/set-user-password",
    params: {
      ...vmPath,
      crypted: bool,
      password: { type: "string", minLength: 5, maxLength: 1024 },
      username: str
    }
  },
  {
    method: "DELETE",
    path: "/nodes/{node}/qemu/{vmid}",
    params: { ...vmPath, "destroy-unreferenced-disks": bool, purge: bool, skiplock: bool }
  },
  { method: "GET", path: "/nodes/{node}/tasks/{upid}/status", params: { node, upid } },
  {
    method: "GET",
    path: "/nodes/{node}/tasks/{upid}/log",
    params: {
      node,
      upid,
      download: bool,
      limit: opt({ type: "integer", minimum: 0 }),
      start: opt({ type: "integer", minimum: 0 })
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/termproxy",
    params: { ...vmPath, serial: opt({ type: "string", enum: ["serial0", "serial1", "serial2", "serial3"] }) }
  },
  {
    method: "GET",
    path: "/nodes/{node}/qemu/{vmid}/vncwebsocket",
    params: { ...vmPath, port: { type: "integer", minimum: 5900, maximum: 5999 }, vncticket: { type: "string", maxLength: 512 } }
  }
]
