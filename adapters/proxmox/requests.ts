// Every call the wrapper can make, as pure builders with the exact upstream method, path template and parameter
// names (reference/proxmox.md §3); the API-schema test runs each one, so a misspelt parameter fails the build.
import type { CloudInit } from "../../ports/Virtualization.ts"
import type { Params, ProxmoxRequest } from "./encoding.ts"
import { sshKeysValue } from "./encoding.ts"
import { stampDescription, stampTags } from "./stamp.ts"

export interface VmAddress {
  readonly node: string
  readonly vmid: number
}

export type PowerAction = "start" | "stop" | "reset"

/** The port's cloud-init settings with the password unwrapped: it is about to go on the wire. */
export type VmConfiguration = Omit<CloudInit, "password"> & { readonly password: string }

const vmPath = (suffix: string) => `/nodes/{node}/qemu/{vmid}${suffix}`

const vm = (
  method: ProxmoxRequest["method"],
  suffix: string,
  at: VmAddress,
  params: Params = {},
  extra: Partial<Pick<ProxmoxRequest, "secrets" | "pathParams">> = {}
): ProxmoxRequest => ({
  method,
  pathTemplate: vmPath(suffix),
  pathParams: { node: at.node, vmid: at.vmid, ...extra.pathParams },
  params,
  ...(extra.secrets === undefined ? {} : { secrets: extra.secrets })
})

export const requests = {
  /** A fresh ticket, or a renewal when `password` is the current ticket (§1.1, §1.3). */
  ticket: (username: string, password: string): ProxmoxRequest => ({
    method: "POST",
    pathTemplate: "/access/ticket",
    pathParams: {},
    params: { username, password },
    secrets: [password]
  }),

  /** `type=vm` returns qemu and lxc alike; callers filter (§3.1). */
  clusterResources: (type: "vm" | "node" | "storage"): ProxmoxRequest => ({
    method: "GET",
    pathTemplate: "/cluster/resources",
    pathParams: {},
    params: { type }
  }),

  /** Answers N when N is free, 400 "already exists" otherwise; reserves nothing (§3.3). */
  nextId: (vmid: number): ProxmoxRequest => ({
    method: "GET",
    pathTemplate: "/cluster/nextid",
    pathParams: {},
    params: { vmid }
  }),

  /**
   * `{vmid}` is the template; `full` so `storage` is allowed and the clone outlives the template (§3.4, §5.9). The
   * description carries our stamp from the clone's first moment (`tags` is not a clone parameter).
   */
  clone: (template: VmAddress, newid: number, name: string, storage: string, stamp: string): ProxmoxRequest =>
    vm("POST", "/clone", template, { newid, name, full: true, storage, description: stampDescription(stamp) }),

  /** The VM's stored config: our stamp (`tags`, `description`) and its lock (§3.5). */
  config: (at: VmAddress): ProxmoxRequest => vm("GET", "/config", at),

  setOnBoot: (at: VmAddress, enabled: boolean): ProxmoxRequest => vm("POST", "/config", at, { onboot: enabled }),

  /** The asynchronous POST variant: a synchronous PUT would hit pveproxy's 30 s proxy timeout (§3.5, §5.5). */
  configure: (at: VmAddress, config: VmConfiguration): ProxmoxRequest =>
    vm("POST", "/config", at, {
      name: config.hostname,
      cores: config.cores,
      sockets: 1,
      // A plain integer is valid both as PVE 9's `[current=]<MiB>` property string and as older releases' integer.
      memory: config.memoryMiB,
      net0: `virtio,bridge=${config.bridge}`,
      ipconfig0: `ip=${config.address},gw=${config.gateway}`,
      nameserver: config.nameservers.join(" "),
      ciuser: config.user,
      cipassword: config.password,
      sshkeys: sshKeysValue(config.sshPublicKeys),
      // The default (1) upgrades packages on first boot: slow and not reproducible (§3.5).
      ciupgrade: false,
      // The serial console needs a socket-type serial port; vga=serial0 sends the display there (§4.1).
      serial0: "socket",
      vga: "serial0",
      agent: "1",
      // A running VPS comes back when its node reboots; a lapse turns this off (§3.5).
      onboot: true,
      tags: stampTags(config.stamp),
      description: stampDescription(config.stamp)
    }, { secrets: [config.password] }),

  setCloudInitPassword: (at: VmAddress, password: string): ProxmoxRequest =>
    vm("POST", "/config", at, { cipassword: password }, { secrets: [password] }),

  /** Absolute size: `+` would add to the current size (§3.6). */
  resize: (at: VmAddress, sizeGiB: number): ProxmoxRequest =>
    vm("PUT", "/resize", at, { disk: "scsi0", size: `${sizeGiB}G` }),

  power: (at: VmAddress, action: PowerAction): ProxmoxRequest => vm("POST", `/status/${action}`, at),

  /** ACPI (or agent) shutdown; without `forceStop`, a guest still up after `timeout` s fails the task (§3.7). */
  shutdown: (at: VmAddress, timeoutSeconds: number): ProxmoxRequest =>
    vm("POST", "/status/shutdown", at, { timeout: timeoutSeconds }),

  statusCurrent: (at: VmAddress): ProxmoxRequest => vm("GET", "/status/current", at),

  listSnapshots: (at: VmAddress): ProxmoxRequest => vm("GET", "/snapshot", at),

  createSnapshot: (at: VmAddress, snapname: string, description: string): ProxmoxRequest =>
    vm("POST", "/snapshot", at, { snapname, description }),

  deleteSnapshot: (at: VmAddress, snapname: string): ProxmoxRequest =>
    vm("DELETE", "/snapshot/{snapname}", at, {}, { pathParams: { snapname } }),

  /** `command` is an array: the form encoding repeats the key (§3.9). */
  agentExec: (at: VmAddress, command: ReadonlyArray<string>, input: string | undefined): ProxmoxRequest =>
    vm("POST", "/agent/exec", at, input === undefined ? { command } : { command, "input-data": input }),

  agentExecStatus: (at: VmAddress, pid: number): ProxmoxRequest => vm("GET", "/agent/exec-status", at, { pid }),

  setUserPassword: (at: VmAddress, username: string, password: string): ProxmoxRequest =>
    vm("POST", "/agent/set-user-password", at, { username, password }, { secrets: [password] }),

  /** Also removes the VMID from jobs and HA, and deletes disks that carry the VMID but left the config (§3.10). */
  destroy: (at: VmAddress): ProxmoxRequest =>
    vm("DELETE", "", at, { purge: true, "destroy-unreferenced-disks": true }),

  termproxy: (at: VmAddress): ProxmoxRequest => vm("POST", "/termproxy", at),

  /** The console's WebSocket upgrade; `vncticket` is percent-encoded by the query encoding (§4.3). */
  vncWebSocket: (at: VmAddress, port: number, vncticket: string): ProxmoxRequest =>
    vm("GET", "/vncwebsocket", at, { port, vncticket }),

  /** Asked on the node named in the UPID: the call is proxied there (§2.3). */
  taskStatus: (node: string, upid: string): ProxmoxRequest => ({
    method: "GET",
    pathTemplate: "/nodes/{node}/tasks/{upid}/status",
    pathParams: { node, upid },
    params: {}
  }),

  taskLog: (node: string, upid: string, start: number, limit: number): ProxmoxRequest => ({
    method: "GET",
    pathTemplate: "/nodes/{node}/tasks/{upid}/log",
    pathParams: { node, upid },
    params: { start, limit }
  })
} as const

export type RequestBuilders = typeof requests
