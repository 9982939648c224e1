// A tiny HTTP client with a cookie jar, to talk to a test server the way a browser would.
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  readonly text: string
  /** Raw Set-Cookie headers of this response. */
  readonly setCookies: ReadonlyArray<string>
}

/** The attributes of one Set-Cookie header, lower-cased names. */
export const parseSetCookie = (header: string) => {
  const [pair = "", ...attributes] = header.split(";").map((s) => s.trim())
  const eq = pair.indexOf("=")
  return {
    name: pair.slice(0, eq),
    value: pair.slice(eq + 1),
    attributes: new Map(attributes.map((a) => {
      const i = a.indexOf("=")
      return i === -1 ? [a.toLowerCase(), ""] as const : [a.slice(0, i).toLowerCase(), a.slice(i + 1)] as const
    }))
  }
}

export class Browser {
  readonly cookies = new Map<string, string>()
  readonly baseUrl: string
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl
  }

  async request(method: string, path: string, options: { readonly json?: unknown; readonly body?: string; readonly headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers }
    if (this.cookies.size > 0) headers["cookie"] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    let body = options.body
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers["content-type"] ??= "application/json"
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    const setCookies = response.headers.getSetCookie()
    for (const header of setCookies) {
      const c = parseSetCookie(header)
      if (c.attributes.get("max-age") === "0" || c.value === "") this.cookies.delete(c.name)
      else this.cookies.set(c.name, c.value)
    }
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, body: parsed, text, setCookies }
  }

  post(path: string, json?: unknown) {
    return this.request("POST", path, json === undefined ? {} : { json })
  }
  get(path: string) {
    return this.request("GET", path)
  }
  put(path: string, json: unknown) {
    return this.request("PUT", path, { json })
  }
}

/** The payload of a JWT, without verifying it (tests only look at claims). */
export const jwtClaims = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"))
