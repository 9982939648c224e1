// Authentication as pve-access-control and pve-http-server do it (reference/proxmox.md §1, §4.3): signed tickets
// `PVE:<user>:<hex time>::<sig>` valid 2 h, CSRF tokens `<hex time>:<hmac>`, API tokens in `Authorization`, and
// short-lived console tickets `PVEVNC:…` bound to user, VM and port. Signatures are HMACs under a per-instance key.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { PveError, unauthorized } from "./PveError.ts"
import type { SimClock } from "./SimClock.ts"

const TICKET_LIFETIME_S = 7200
const CLOCK_SKEW_S = 300
const VNC_MIN_AGE_S = -20
const VNC_MAX_AGE_S = 40

/** A request's headers, names in lower case, repeated ones joined. */
export type RequestHeaders = Readonly<Record<string, string | undefined>>

export interface Identity {
  /** `root@pam`, or the full token id `root@pam!zh` for API tokens. */
  readonly user: string
  readonly viaToken: boolean
}

export interface AuthOptions {
  readonly username: string
  readonly password: string
  readonly tokens: ReadonlyArray<{ readonly id: string; readonly secret: string }>
}

const hex8 = (seconds: number) => seconds.toString(16).toUpperCase().padStart(8, "0")

/** Perl's `uri_unescape`: %XX sequences only (a `+` stays a `+`). */
export const uriUnescape = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/%(?![0-9a-fA-F]{2})/g, "%25"))
  } catch {
    return text
  }
}

/** `PVE::APIServer::Formatter::extract_auth_value`: `<key>=<value>` or `<key> <value>` up to the next `;`. */
const extractAuthValue = (header: string | undefined, key: string): string | undefined => {
  if (header === undefined) return undefined
  const value = new RegExp(`(?:^|\\s)${key}(?:=| )([^;]*)`).exec(header)?.[1]
  return value === undefined || value === "" ? undefined : uriUnescape(value)
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export class Auth {
  private readonly key = randomBytes(32)
  private readonly tokens: ReadonlyMap<string, string>
  private readonly clock: SimClock
  private readonly options: AuthOptions

  constructor(clock: SimClock, options: AuthOptions) {
    this.clock = clock
    this.options = options
    this.tokens = new Map(options.tokens.map((t) => [t.id, t.secret]))
  }

  private sign(data: string, algorithm: "sha256" | "sha512"): string {
    return createHmac(algorithm, this.key).update(data).digest("base64")
  }

  private ageOk(hex: string, min: number, max: number): boolean {
    const age = this.clock.nowSeconds() - parseInt(hex, 16)
    return age > min && age < max
  }

  issueTicket(user: string): { readonly ticket: string; readonly csrf: string } {
    const time = hex8(this.clock.nowSeconds())
    const plain = `PVE:${user}:${time}`
    return {
      ticket: `${plain}::${this.sign(plain, "sha512")}`,
      // Digest::SHA::hmac_sha256_base64 leaves the padding off.
      csrf: `${time}:${this.sign(`${time}:${user}`, "sha256").replace(/=+$/, "")}`
    }
  }

  /** The ticket's user when it is genuine and younger than 2 h (5 min of clock skew allowed). */
  verifyTicket(ticket: string): string | undefined {
    const m = /^PVE:([^:]+):([0-9A-F]{8})::(.+)$/.exec(ticket)
    if (m === null) return undefined
    const [, user = "", time = "", sig = ""] = m
    if (!sameText(sig, this.sign(`PVE:${user}:${time}`, "sha512"))) return undefined
    return this.ageOk(time, -CLOCK_SKEW_S, TICKET_LIFETIME_S) ? user : undefined
  }

  verifyCsrf(user: string, token: string | undefined): boolean {
    const m = /^([0-9A-F]{8}):(\S+)$/.exec(token ?? "")
    if (m === null) return false
    const [, time = "", sig = ""] = m
    return sameText(sig, this.sign(`${time}:${user}`, "sha256").replace(/=+$/, "")) &&
      this.ageOk(time, -CLOCK_SKEW_S, TICKET_LIFETIME_S)
  }

  /** `USER@REALM!TOKENID=SECRET`, split on the last `=`. */
  verifyToken(value: string): string | undefined {
    const at = value.lastIndexOf("=")
    if (at < 0) return undefined
    const id = value.slice(0, at)
    const secret = this.tokens.get(id)
    return secret !== undefined && sameText(secret, value.slice(at + 1)) ? id : undefined
  }

  /** `POST /access/ticket`: password login, or renewal with a still-valid ticket of the same user. */
  login(username: string, password: string): string | undefined {
    if (username === this.options.username && password === this.options.password) return username
    return password.startsWith("PVE:") && this.verifyTicket(password) === username ? username : undefined
  }

  vncTicket(user: string, vmid: number, port: number): string {
    const time = hex8(this.clock.nowSeconds())
    return `PVEVNC:${time}::${this.sign(`PVEVNC:${time}:${user}:/vms/${vmid}:${port}`, "sha512")}`
  }

  /** `verify_vnc_ticket`: same user, path and port, and an age within −20…+40 s. */
  verifyVncTicket(ticket: string, user: string, vmid: number, port: number): boolean {
    const m = /^PVEVNC:([0-9A-F]{8})::(.+)$/.exec(ticket)
    if (m === null) return false
    const [, time = "", sig = ""] = m
    return sameText(sig, this.sign(`PVEVNC:${time}:${user}:/vms/${vmid}:${port}`, "sha512")) &&
      this.ageOk(time, VNC_MIN_AGE_S, VNC_MAX_AGE_S)
  }

  /**
   * pve-http-server's auth path: the `PVEAuthCookie` cookie, else `Authorization: PVEAuthCookie=…`, else an API
   * token; non-GET ticket requests need the CSRF header. `null` for the calls that need no auth (`/access/ticket`).
   * Failures throw a bare 401 with PVE's status line.
   */
  authenticate(method: string, relPath: string, headers: RequestHeaders): Identity | null {
    const ticket = extractAuthValue(headers.cookie, "PVEAuthCookie") ??
      extractAuthValue(headers.authorization, "PVEAuthCookie")
    const apiToken = ticket === undefined ? extractAuthValue(headers.authorization, "PVEAPIToken") : undefined
    if (relPath === "/access/ticket" && (method === "POST" || method === "GET")) {
      // allowtoken: 0 — checked before the handler runs (rest_handler's raise_perm_exc).
      if (apiToken !== undefined) {
        throw new PveError(403, "Permission check failed (URI '/access/ticket' not available with API token, need proper ticket.\n)\n")
      }
      return null
    }
    if (apiToken !== undefined) {
      const user = this.verifyToken(apiToken)
      if (user === undefined) throw unauthorized("Authentication failed!")
      return { user, viaToken: true }
    }
    if (ticket === undefined) throw unauthorized("No ticket")
    const user = this.verifyTicket(ticket)
    if (user === undefined) throw unauthorized("Authentication failed!")
    if (method !== "GET" && !this.verifyCsrf(user, headers["csrfpreventiontoken"])) {
      throw unauthorized("Permission denied - invalid csrf token")
    }
    return { user, viaToken: false }
  }
}
