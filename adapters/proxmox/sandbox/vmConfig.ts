// Reading and writing a VM's config values the way qemu-server prints them: drives (`local-lvm:vm-101-disk-0,size=10G`),
// NICs (`virtio=BC:24:11:…,bridge=vmbr0`), sizes with binary units, memory and vCPU counts.
import { createHash, randomBytes, randomUUID } from "node:crypto"

export type VmConfig = Map<string, string>

/** `PVE::JSONSchema::format_size`: the largest binary unit that divides the size exactly. */
export const formatSize = (bytes: number): string => {
  let value = bytes
  for (const unit of ["", "K", "M", "G"]) {
    if (value % 1024 !== 0) return `${value}${unit}`
    value /= 1024
  }
  return `${value}T`
}

/** `10G`, `512M`, `1073741824` → bytes; undefined when it does not parse. */
export const parseSize = (text: string): number | undefined => {
  const m = /^(\d+(?:\.\d+)?)([KMGT])?$/.exec(text)
  if (m === null) return undefined
  const exponent = m[2] === undefined ? 0 : "KMGT".indexOf(m[2]) + 1
  return Math.floor(Number(m[1]) * 1024 ** exponent)
}

const DRIVE_KEY = /^(ide|sata|scsi|virtio)\d+$|^efidisk0$|^tpmstate0$/

export interface Drive {
  readonly key: string
  readonly volid: string
  readonly storage: string
  readonly size: number
  readonly cdrom: boolean
  readonly cloudinit: boolean
}

/** The drives of a config that hold data (CD-ROMs and the cloud-init drive are listed with their flags). */
export const drives = (config: VmConfig): ReadonlyArray<Drive> => {
  const out: Array<Drive> = []
  for (const [key, value] of config) {
    if (!DRIVE_KEY.test(key)) continue
    const [volid = "", ...options] = value.split(",")
    const opts = new Map(options.map((o) => [o.split("=")[0] ?? "", o.split("=").slice(1).join("=")]))
    const storage = volid.includes(":") ? volid.split(":")[0] ?? "" : ""
    out.push({
      key,
      volid,
      storage,
      size: parseSize(opts.get("size") ?? "0") ?? 0,
      cdrom: opts.get("media") === "cdrom",
      cloudinit: volid.endsWith("-cloudinit")
    })
  }
  return out
}

export const dataDrives = (config: VmConfig) => drives(config).filter((d) => !d.cdrom && !d.cloudinit)

/** Rewrites one option (`size=`) of a drive value, keeping the others in place. */
export const withDriveSize = (value: string, bytes: number): string => {
  const [volid = "", ...options] = value.split(",")
  const kept = options.filter((o) => !o.startsWith("size="))
  return [volid, ...kept, `size=${formatSize(bytes)}`].join(",")
}

/** The boot disk (first of `boot: order=` that is a data drive, else the first data drive): its size is `maxdisk`. */
export const bootDisk = (config: VmConfig): Drive | undefined => {
  const data = dataDrives(config)
  const order = /order=([^,]+)/.exec(config.get("boot") ?? "")?.[1]?.split(";") ?? []
  for (const key of order) {
    const found = data.find((d) => d.key === key)
    if (found !== undefined) return found
  }
  return [...data].sort((a, b) => a.key.localeCompare(b.key, "en", { numeric: true }))[0]
}

export const vcpus = (config: VmConfig): number =>
  Number(config.get("sockets") ?? "1") * Number(config.get("cores") ?? "1")

/** `memory` is a property string in PVE 9 (`[current=]<MiB>`), a plain integer before. Default 512 MiB. */
export const memoryMiB = (config: VmConfig): number => {
  const raw = config.get("memory")
  if (raw === undefined) return 512
  const m = /^(?:current=)?(\d+)/.exec(raw)
  return m === null ? 512 : Number(m[1])
}

export const memoryBytes = (config: VmConfig) => memoryMiB(config) * 1024 * 1024

// --- network -------------------------------------------------------------------------------------------------------

const NIC_MODELS = ["e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e", "i82551", "i82557b",
  "i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"]

/** A random unicast address under Proxmox's default OUI prefix (`BC:24:11`). */
export const randomMac = (): string =>
  ["BC", "24", "11", ...[...randomBytes(3)].map((b) => b.toString(16).padStart(2, "0").toUpperCase())].join(":")

/**
 * `parse_net` + `print_net`: normalises `virtio,bridge=vmbr0` or `model=virtio,macaddr=…` to `virtio=<MAC>,bridge=…`,
 * generating a MAC when there is none (or when `newMac` asks for one, as clone does). Undefined when no model is set.
 */
export const normaliseNet = (value: string, newMac = false): string | undefined => {
  let model: string | undefined
  let mac: string | undefined
  const rest: Array<string> = []
  for (const part of value.split(",")) {
    const [key = "", ...v] = part.split("=")
    const val = v.join("=")
    if (NIC_MODELS.includes(key)) {
      model = key
      if (val !== "") mac = val
    } else if (key === "model") model = val
    else if (key === "macaddr") mac = val
    else rest.push(part)
  }
  if (model === undefined) return undefined
  return [`${model}=${newMac || mac === undefined ? randomMac() : mac}`, ...rest].join(",")
}

// --- identity ------------------------------------------------------------------------------------------------------

export const newSmbios = (previous: string | undefined): string => {
  const kept = (previous ?? "").split(",").filter((p) => p !== "" && !p.startsWith("uuid="))
  return [`uuid=${randomUUID()}`, ...kept].join(",")
}

export const newUuid = (): string => randomUUID()

/** The config `digest`: SHA-1 over the config as written, so a change anywhere changes it. */
export const configDigest = (config: VmConfig): string =>
  createHash("sha1").update([...config].map(([k, v]) => `${k}: ${v}\n`).join("")).digest("hex")

/** qemu-server writes config keys in a stable order; `digest` and listings follow it. */
export const sortedConfig = (config: VmConfig): VmConfig =>
  new Map([...config].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true })))
