// How one Proxmox call is written on the wire: the request value every builder returns, its path filled from the
// schema's path template, and its parameters form- or query-encoded with PVE's typing rules
// (reference/proxmox.md §2.1).

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE"

/** Booleans become 1/0 and arrays repeat their key; nothing else is accepted, so no value reaches the wire as JSON. */
export type ParamValue = string | number | boolean | ReadonlyArray<string>

export type Params = Readonly<Record<string, ParamValue>>

/**
 * One call, described so it can be both sent and checked against `proxmox-apidoc.json`: `pathTemplate` is the schema's
 * path (`/nodes/{node}/qemu/{vmid}/clone`), `pathParams` fill it, `params` go in the query (GET, DELETE) or the form
 * body (POST, PUT).
 */
export interface ProxmoxRequest {
  readonly method: HttpMethod
  readonly pathTemplate: string
  readonly pathParams: Readonly<Record<string, string | number>>
  readonly params: Params
  /** Values that must never appear in an error or a log (passwords); the session redacts them from details. */
  readonly secrets?: ReadonlyArray<string>
}

/** What goes on the wire, relative to `/api2/json`. */
export interface WireRequest {
  readonly method: HttpMethod
  /** Path and query string. */
  readonly target: string
  /** The form body of a POST/PUT, `undefined` for GET/DELETE. */
  readonly body: string | undefined
}

export const apiPrefix = "/api2/json"

const placeholder = /\{([^}]+)\}/g

/**
 * Each path parameter is percent-encoded on its own: a UPID carries `:`, `@` and `!`, which PVE URI-unescapes per
 * segment (reference/proxmox.md §2.1).
 */
export const fillTemplate = (template: string, pathParams: ProxmoxRequest["pathParams"]): string =>
  template.replace(placeholder, (_, name: string) => {
    const value = pathParams[name]
    if (value === undefined) throw new Error(`path parameter ${name} missing for ${template}`)
    return encodeURIComponent(String(value))
  })

/** Form-encoded booleans must be 1/0 ("type check ('boolean') failed - got 'true'"); arrays repeat the key (§2.1). */
export const encodeParams = (params: Params): URLSearchParams => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === "boolean") search.append(key, value ? "1" : "0")
    else if (typeof value === "number") search.append(key, String(value))
    else if (typeof value === "string") search.append(key, value)
    else for (const item of value) search.append(key, item)
  }
  return search
}

export const toWire = (request: ProxmoxRequest): WireRequest => {
  const path = fillTemplate(request.pathTemplate, request.pathParams)
  const encoded = encodeParams(request.params).toString()
  if (request.method === "GET" || request.method === "DELETE") {
    return { method: request.method, target: encoded === "" ? path : `${path}?${encoded}`, body: undefined }
  }
  return { method: request.method, target: path, body: encoded }
}

/**
 * `sshkeys` is validated raw against `^[-%a-zA-Z0-9_.!~*'()]*$` and then URI-unescaped, so the newline-joined keys are
 * percent-encoded once here and a second time by the form encoding (reference/proxmox.md §3.5).
 */
export const sshKeysValue = (keys: ReadonlyArray<string>): string => encodeURIComponent(keys.join("\n"))
