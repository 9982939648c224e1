// `GET|POST|PUT /nodes/{node}/qemu/{vmid}/config` (reference/proxmox.md §3.5): the stored values (cipassword masked,
// sshkeys still percent-encoded), synchronous PUT and asynchronous POST updates with qemu-server's early checks.
import { Effect } from "effect"
import { type Identity, uriUnescape } from "./Auth.ts"
import { apiSchema } from "./apiSchema.ts"
import type { Vm } from "./Cluster.ts"
import { fail, flockTimeout, paramError } from "./PveError.ts"
import { type Params, reply, type Route } from "./Route.ts"
import type { Sim } from "./Sim.ts"
import { specFor } from "./validateParams.ts"
import { assertUnlocked, rootOnly } from "./vmGuards.ts"
import { configDigest, dataDrives, formatSize, newUuid, normaliseNet, sortedConfig } from "./vmConfig.ts"

const configSchema = apiSchema.find((s) => s.method === "PUT" && s.path === "/nodes/{node}/qemu/{vmid}/config")?.params ?? {}

/** Parameters of the call itself rather than config options. */
const CALL_PARAMS = new Set(["node", "vmid", "digest", "background_delay", "skiplock", "delete", "revert", "force",
  "import-working-storage"])

const optionExists = (key: string) => !CALL_PARAMS.has(key) && specFor(configSchema, key) !== undefined

const DRIVE_KEY = /^(ide|sata|scsi|virtio)\d+$|^efidisk0$|^tpmstate0$/
const SSH_KEY = /^(ssh-(rsa|dss|ed25519)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+={0,3}( .*)?$/

/** `PVE::Tools::validate_ssh_public_keys` on the URI-unescaped value (ssh-keygen -l, here a shape check). */
const validateSshKeys = (decoded: string) => {
  for (const line of decoded.split("\n")) {
    if (line.trim() === "") continue
    if (!SSH_KEY.test(line.trim())) throw fail("SSH public key validation error")
  }
}

export interface ConfigUpdate {
  readonly sets: ReadonlyMap<string, string>
  readonly deletes: ReadonlyArray<string>
  /** The line the worker logs: `update VM 101: -cores 2 -cipassword <hidden> …`. */
  readonly logLine: string
}

const splitList = (value: string | undefined) => (value ?? "").split(/[;,\0\s]+/).filter((s) => s !== "")

/**
 * `PVE::GuestHelpers::get_unique_tags` with the default tag style: duplicates dropped (case-insensitively), sorted,
 * joined with `;` — what the config then holds and listings show.
 */
const uniqueTags = (value: string) => {
  const seen = new Map<string, string>()
  for (const tag of splitList(value)) if (!seen.has(tag.toLowerCase())) seen.set(tag.toLowerCase(), tag)
  return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, tag]) => tag).join(";")
}

/** `$update_vm_api` up to the config load: parameter checks that fail the call itself. */
const prepareUpdate = (params: Params, vmid: number, identity: Identity | null): ConfigUpdate => {
  rootOnly(identity, params, ["skiplock"])
  const sshkeys = params.str("sshkeys")
  if (sshkeys !== undefined) validateSshKeys(uriUnescape(sshkeys))
  const sets = new Map<string, string>()
  for (const [key, value] of params.entries()) {
    if (CALL_PARAMS.has(key)) continue
    sets.set(key, Array.isArray(value) ? value.join(",") : String(value))
  }
  const reverts = splitList(params.str("revert"))
  const deletes = splitList(params.str("delete")).map((k) => (k === "cdrom" ? "ide2" : k))
  if (sets.size === 0 && reverts.length === 0 && deletes.length === 0) throw fail("no options specified")
  for (const key of reverts) {
    if (!optionExists(key)) throw paramError({ revert: `unknown option '${key}'` })
    if (sets.has(key)) throw paramError({ delete: `you can't use '-${key}' and -revert ${key}' at the same time` })
  }
  for (const key of deletes) {
    if (sets.has(key)) throw paramError({ delete: `you can't use '-${key}' and -delete ${key}' at the same time` })
    if (reverts.includes(key)) throw paramError({ revert: `you can't use '-delete ${key}' and -revert ${key}' at the same time` })
    if (!optionExists(key)) throw paramError({ delete: `unknown option '${key}'` })
  }
  for (const [key, value] of sets) {
    if (/^net\d+$/.test(key)) {
      const net = normaliseNet(value)
      if (net === undefined) {
        throw paramError({ [key]: `invalid format - format error\n${key}.model: property is missing and it is not optional\n` })
      }
      sets.set(key, net)
    } else if (key === "vmgenid" && value === "1") sets.set(key, newUuid())
    else if (key === "tags") sets.set(key, uniqueTags(value))
  }
  const shown = [...params.entries()]
    .filter(([k]) => k !== "node" && k !== "vmid")
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `-${k} ${k === "cipassword" ? "<hidden>" : String(v)}`)
  return { sets, deletes, logLine: `update VM ${vmid}: ${shown.join(" ")}` }
}

/** `$load_and_check_config`: digest and lock, before forking and again under the flock. */
const loadAndCheck = (sim: Sim, node: string, vmid: number, params: Params): Vm => {
  const vm = sim.cluster.vmOn(node, vmid)
  const digest = params.str("digest")
  if (digest !== undefined && digest !== "" && digest !== configDigest(vm.config)) {
    throw fail("checksum mismatch (file change by other user?)")
  }
  if (params.flag("skiplock") !== true) assertUnlocked(vm)
  return vm
}

/** Writes the update: new disks are allocated (`<storage>:<GiB>`), removed disks become `unusedN`. */
const applyUpdate = (sim: Sim, vm: Vm, update: ConfigUpdate) => {
  const config = new Map(vm.config)
  for (const key of update.deletes) {
    const drive = dataDrives(config).find((d) => d.key === key)
    if (drive !== undefined) {
      let n = 0
      while (config.has(`unused${n}`)) n++
      config.set(`unused${n}`, drive.volid)
    }
    config.delete(key)
  }
  const used = new Set(dataDrives(config).map((d) => d.volid))
  for (const [key, value] of update.sets) {
    const alloc = DRIVE_KEY.test(key) ? /^([a-z][a-z0-9\-_.]*[a-z0-9]):(\d+(?:\.\d+)?|cloudinit)(,.*)?$/i.exec(value) : null
    if (alloc === null) {
      config.set(key, value)
      continue
    }
    const [, storage = "", size = "", rest = ""] = alloc
    if (sim.cluster.nodes.get(vm.node)?.storage.find((s) => s.id === storage) === undefined) {
      throw fail(`storage '${storage}' does not exist`)
    }
    if (size === "cloudinit") {
      config.set(key, `${storage}:vm-${vm.vmid}-cloudinit,media=cdrom`)
      continue
    }
    const bytes = Math.floor(Number(size) * 1024 ** 3)
    if (bytes > sim.cluster.storageFree(vm.node, storage)) {
      throw fail(`lvcreate 'pve/vm-${vm.vmid}-disk-0' error:   Volume group "pve" has insufficient free space`)
    }
    let n = 0
    while (used.has(`${storage}:vm-${vm.vmid}-disk-${n}`)) n++
    used.add(`${storage}:vm-${vm.vmid}-disk-${n}`)
    config.set(key, `${storage}:vm-${vm.vmid}-disk-${n}${rest},size=${formatSize(bytes)}`)
  }
  vm.config = sortedConfig(config)
}

/** A stored value typed as the schema says (integers and booleans are numbers in the JSON). */
const typed = (key: string, value: string): string | number => {
  const type = specFor(configSchema, key)?.type
  const numeric = type === "integer" || type === "number" || type === "boolean" || key === "snaptime"
  return numeric && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
}

/** Polls the task every 25 ms of the simulator's clock until it stopped or `ms` passed. */
const waitForTask = (sim: Sim, upid: string, ms: number): Effect.Effect<void> => {
  const deadline = sim.clock.now() + ms
  const poll: Effect.Effect<void> = Effect.suspend(() =>
    sim.tasks.get(upid)?.status === "stopped" || sim.clock.now() >= deadline
      ? Effect.void
      : Effect.andThen(sim.clock.sleep(25), poll)
  )
  return poll
}

export const configRoutes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/nodes/{node}/qemu/{vmid}/config",
    proxyNode: true,
    handle: ({ params, sim }) => {
      const vm = sim.cluster.vmOn(params.req("node"), params.reqInt("vmid"))
      const snapname = params.str("snapshot")
      const snapshot = snapname === undefined ? undefined : vm.snapshots.find((s) => s.name === snapname)
      if (snapname !== undefined && snapshot === undefined) throw fail(`snapshot '${snapname}' does not exist`)
      const config = snapshot?.config ?? vm.config
      const out: Record<string, string | number> = {}
      for (const [key, value] of config) out[key] = key === "cipassword" ? "**********" : typed(key, value)
      out["digest"] = configDigest(config)
      return reply(out)
    }
  },
  {
    method: "PUT",
    path: "/nodes/{node}/qemu/{vmid}/config",
    proxyNode: true,
    handle: ({ identity, params, sim }) => {
      const node = params.req("node")
      const vmid = params.reqInt("vmid")
      const update = prepareUpdate(params, vmid, identity)
      loadAndCheck(sim, node, vmid, params)
      const flock = sim.cluster.flock(vmid)
      return Effect.gen(function*() {
        if (!(yield* flock.acquire(10_000, sim.clock))) return yield* Effect.fail(fail(flockTimeout(vmid)))
        try {
          applyUpdate(sim, loadAndCheck(sim, node, vmid, params), update)
        } finally {
          flock.release()
        }
        return reply(null)
      })
    }
  },
  {
    method: "POST",
    path: "/nodes/{node}/qemu/{vmid}/config",
    proxyNode: true,
    handle: ({ fork, identity, params, sim }) => {
      const node = params.req("node")
      const vmid = params.reqInt("vmid")
      const update = prepareUpdate(params, vmid, identity)
      loadAndCheck(sim, node, vmid, params)
      const upid = fork({
        node,
        type: "qmconfig",
        id: String(vmid),
        flockVmid: vmid,
        begin: (log) => {
          const vm = loadAndCheck(sim, node, vmid, params)
          log(update.logLine)
          return { finish: () => applyUpdate(sim, vm, update) }
        }
      })
      const delay = params.int("background_delay")
      if (delay === undefined) return reply(upid)
      return Effect.andThen(waitForTask(sim, upid, delay * 1000), () => {
        const task = sim.tasks.get(upid)
        if (task?.status !== "stopped") return Effect.succeed(reply(upid))
        if (task.exitstatus === "OK" || /^WARNINGS/.test(task.exitstatus ?? "")) return Effect.succeed(reply(null))
        return Effect.fail(fail(`failed to update VM ${vmid}: ${task.exitstatus ?? "unexpected status"}`))
      })
    }
  }
]
