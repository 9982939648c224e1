// A deliberately plain PVE client for the sandbox's specifications: raw fetch calls, form or JSON bodies, and the three
// ways to authenticate (ticket cookie + CSRF, ticket in Authorization, API token).
import { type SandboxProxmox, sandboxProxmox, type SandboxProxmoxOptions } from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { type Started, startScoped } from "../../support/startScoped.ts"

export const TOKEN = { id: "root@pam!zh", secret: "9b1c2f7e-4a51-4e7d-9d0c-3f2a7e6b5c10" } as const

export interface Answer {
  readonly status: number
  readonly statusText: string
  readonly text: string
  readonly headers: Headers
  /** The parsed JSON body, or undefined for an empty or non-JSON body. */
  readonly json: unknown
  /** `json.data` when the body is a PVE envelope. */
  readonly data: unknown
}

export type Credentials =
  | { readonly _tag: "ticket"; readonly ticket: string; readonly csrf: string; readonly via?: "cookie" | "header" }
  | { readonly _tag: "token"; readonly id: string; readonly secret: string }
  | { readonly _tag: "none" }

export type Body =
  | { readonly form: Readonly<Record<string, string | number | ReadonlyArray<string>>> }
  | { readonly json: unknown }
  | { readonly raw: string; readonly contentType: string }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

export const field = (u: unknown, key: string): unknown => (isRecord(u) ? u[key] : undefined)

export const formEncode = (form: Readonly<Record<string, string | number | ReadonlyArray<string>>>): string => {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(form)) {
    if (typeof v === "string" || typeof v === "number") params.append(k, String(v))
    else for (const item of v) params.append(k, item)
  }
  return params.toString()
}

export class Pve {
  readonly url: string
  readonly credentials: Credentials

  constructor(url: string, credentials: Credentials) {
    this.url = url
    this.credentials = credentials
  }

  with(credentials: Credentials): Pve {
    return new Pve(this.url, credentials)
  }

  private headers(method: string): Record<string, string> {
    const c = this.credentials
    switch (c._tag) {
      case "none":
        return {}
      case "token":
        return { Authorization: `PVEAPIToken=${c.id}=${c.secret}` }
      case "ticket": {
        const auth = c.via === "header"
          ? { Authorization: `PVEAuthCookie=${c.ticket}` }
          : { Cookie: `PVEAuthCookie=${encodeURIComponent(c.ticket)}` }
        return method === "GET" ? auth : { ...auth, CSRFPreventionToken: c.csrf }
      }
    }
  }

  async call(method: string, path: string, body?: Body, extraHeaders: Record<string, string> = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...this.headers(method), ...extraHeaders }
    let payload: string | undefined
    if (body !== undefined) {
      if ("form" in body) {
        payload = formEncode(body.form)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
      } else if ("json" in body) {
        payload = JSON.stringify(body.json)
        headers["Content-Type"] = "application/json"
      } else {
        payload = body.raw
        headers["Content-Type"] = body.contentType
      }
    }
    const response = await fetch(`${this.url}/api2/json${path}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload })
    })
    const text = await response.text()
    let json: unknown
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, statusText: response.statusText, text, headers: response.headers, json, data: field(json, "data") }
  }

  get(path: string, query: Readonly<Record<string, string | number>> = {}): Promise<Answer> {
    const search = formEncode(query)
    return this.call("GET", search === "" ? path : `${path}?${search}`)
  }

  post(path: string, form: Readonly<Record<string, string | number | ReadonlyArray<string>>> = {}): Promise<Answer> {
    return this.call("POST", path, { form })
  }

  put(path: string, form: Readonly<Record<string, string | number | ReadonlyArray<string>>> = {}): Promise<Answer> {
    return this.call("PUT", path, { form })
  }

  /** DELETE parameters go in the query: pveproxy refuses a body on DELETE. */
  del(path: string, query: Readonly<Record<string, string | number>> = {}): Promise<Answer> {
    const search = formEncode(query)
    return this.call("DELETE", search === "" ? path : `${path}?${search}`)
  }

  /** Polls the task on the node its UPID names until it stops. */
  async waitTask(upid: unknown, timeoutMs = 10_000): Promise<{ readonly exitstatus: string; readonly log: ReadonlyArray<string> }> {
    if (typeof upid !== "string") throw new Error(`not a UPID: ${JSON.stringify(upid)}`)
    const node = upid.split(":")[1] ?? ""
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const status = await this.get(`/nodes/${node}/tasks/${encodeURIComponent(upid)}/status`)
      if (field(status.data, "status") === "stopped") {
        const log = await this.get(`/nodes/${node}/tasks/${encodeURIComponent(upid)}/log`, { limit: 500 })
        const lines = Array.isArray(log.data) ? log.data.map((l) => String(field(l, "t"))) : []
        return { exitstatus: String(field(status.data, "exitstatus")), log: lines }
      }
      if (Date.now() > deadline) throw new Error(`task ${upid} still running after ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
}

export const login = async (url: string, username = "root@pam", password = "sandbox"): Promise<Pve> => {
  const answer = await new Pve(url, { _tag: "none" }).post("/access/ticket", { username, password })
  const ticket = field(answer.data, "ticket")
  const csrf = field(answer.data, "CSRFPreventionToken")
  if (typeof ticket !== "string" || typeof csrf !== "string") throw new Error(`login failed: ${answer.status} ${answer.text}`)
  return new Pve(url, { _tag: "ticket", ticket, csrf })
}

export const tokenClient = (url: string) => new Pve(url, { _tag: "token", ...TOKEN })

/** Options for fast specifications: every task finishes at once unless a test slows one down. */
export const instant: SandboxProxmoxOptions = { taskDurations: { default: 0 }, tokens: [TOKEN] }

/** A sandbox held by a test file, stopped by `close()`. */
export type StartedSandbox = Started<SandboxProxmox>

/** Starts a sandbox for one test file; `afterAll(close)` in the caller. */
export const startSandbox = (options: SandboxProxmoxOptions = instant): Promise<StartedSandbox> => startScoped(sandboxProxmox(options))

let nextVmid = 200
/** A fresh VMID per call, so tests sharing a sandbox do not collide. */
export const freshVmid = () => nextVmid++

/** Full clone of a template into `newid` and waits for it. */
export const cloneVm = async (pve: Pve, newid: number, options: { readonly node?: string; readonly template?: number; readonly name?: string } = {}) => {
  const node = options.node ?? "pve1"
  const answer = await pve.post(`/nodes/${node}/qemu/${options.template ?? 9000}/clone`, {
    newid,
    name: options.name ?? `vps-${newid}`,
    full: 1,
    storage: "local-lvm"
  })
  if (answer.status !== 200) throw new Error(`clone failed: ${answer.status} ${answer.text}`)
  const task = await pve.waitTask(answer.data)
  if (task.exitstatus !== "OK") throw new Error(`clone task failed: ${task.exitstatus}`)
  return answer
}
