// Errors as pve-http-server reports them (reference/proxmox.md §2.2): a status, a message whose first line becomes the
// HTTP reason phrase, and for 400 the per-parameter `errors` map. Messages keep PVE's trailing newline.
export class PveError extends Error {
  readonly status: number
  readonly errors: Readonly<Record<string, string>> | undefined
  /** Auth-path and transport failures answer with the status line only, no JSON body. */
  readonly bare: boolean

  constructor(status: number, message: string, errors?: Readonly<Record<string, string>>, bare = false) {
    super(message)
    this.status = status
    this.errors = errors
    this.bare = bare
  }
}

/** A `die "…\n"` inside an API handler: HTTP 500. */
export const fail = (message: string): PveError => new PveError(500, message.endsWith("\n") ? message : `${message}\n`)

/** `raise_param_exc`: HTTP 400 "Parameter verification failed." with the offending parameters. */
export const paramError = (errors: Readonly<Record<string, string>>): PveError =>
  new PveError(400, "Parameter verification failed.\n", errors)

export const unauthorized = (line: string): PveError => new PveError(401, line, undefined, true)

/** The error a task dies with; its message becomes the task's exit status. */
export class TaskError extends Error {}

// --- messages the client recognises (reference/proxmox.md §2.2, §3) ---------------------------------------------

export const configMissing = (node: string, vmid: number) =>
  `Configuration file 'nodes/${node}/qemu-server/${vmid}.conf' does not exist`

/** `check_running` on a VM that is not on the node (`assert_config_exists_on_node`). */
export const configNotOnNode = (node: string, vmid: number) =>
  `unable to find configuration file for VM ${vmid} on node '${node}'`

export const locked = (lock: string) => `VM is locked (${lock})`

export const flockTimeout = (vmid: number) => `can't lock file '/var/lock/qemu-server/lock-${vmid}.conf' - got timeout`

export const unknownNode = (node: string) =>
  `hostname lookup '${node}' failed - failed to get address info for: ${node}: Name or service not known`
