// Checks a request, as it goes on the wire, against Proxmox's own API schema (the endpoints the repository uses, kept
// as test/fixtures/proxmox-apidoc/, made from reference/proxmox-apidoc.json): the path template and method exist, every
// parameter is declared, each value has the declared type and format, and every required parameter is there.
import { readFileSync } from "node:fs"
import { Schema } from "effect"
import { type ProxmoxRequest, toWire } from "../../../adapters/proxmox/encoding.ts"
import { type ApiNode, SUBSET_FILE, subsetNodes } from "../../fixtures/proxmox-apidoc/subset.ts"

interface ParamSpec {
  readonly type?: string | undefined
  readonly optional?: number | boolean | undefined
  readonly enum?: ReadonlyArray<string> | null | undefined
  readonly minimum?: number | undefined
  readonly maximum?: number | undefined
  readonly minLength?: number | undefined
  readonly maxLength?: number | undefined
  readonly pattern?: string | undefined
  readonly format?: string | { readonly [key: string]: unknown } | undefined
  readonly default_key?: number | undefined
  readonly alias?: string | undefined
  readonly keyAlias?: string | undefined
}

/** The schema is Perl output too: a few bounds are strings. */
const Num = Schema.Union([Schema.Number, Schema.NumberFromString])

const ParamSpec: Schema.Codec<ParamSpec, unknown> = Schema.Struct({
  type: Schema.optional(Schema.String),
  optional: Schema.optional(Schema.Union([Schema.Number, Schema.Boolean])),
  enum: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  minimum: Schema.optional(Num),
  maximum: Schema.optional(Num),
  minLength: Schema.optional(Num),
  maxLength: Schema.optional(Num),
  pattern: Schema.optional(Schema.String),
  format: Schema.optional(Schema.Union([Schema.String, Schema.Record(Schema.String, Schema.Unknown)])),
  default_key: Schema.optional(Num),
  alias: Schema.optional(Schema.String),
  keyAlias: Schema.optional(Schema.String)
})

/** Decoded only for the endpoints a request names: the rest of the schema is none of this check's business. */
const MethodInfo = Schema.Struct({
  parameters: Schema.optional(Schema.Struct({
    properties: Schema.optional(Schema.Record(Schema.String, ParamSpec))
  }))
})

export type ApiIndex = ReadonlyMap<string, ApiNode>

export const loadApiIndex = (text: string): ApiIndex => {
  const roots = subsetNodes(text)
  const index = new Map<string, ApiNode>()
  const walk = (node: ApiNode) => {
    index.set(node.path, node)
    for (const child of node.children ?? []) walk(child)
  }
  roots.forEach(walk)
  return index
}

export const readApidoc = () => readFileSync(SUBSET_FILE, "utf8")

// --- named string formats of pve-common's JSONSchema.pm that the wrapper sends ---------------------------------------

const label = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
const ipv4 = /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/
const isIp = (s: string) => ipv4.test(s) || (/^[0-9a-fA-F:]+$/.test(s) && s.includes(":"))

const namedFormats: Record<string, (value: string) => boolean> = {
  "pve-vmid": (v) => /^\d+$/.test(v),
  "pve-node": (v) => new RegExp(`^${label}$`).test(v),
  "dns-name": (v) => new RegExp(`^(?:${label}\\.)*${label}$`).test(v),
  "pve-configid": (v) => /^[a-z][a-z0-9_-]+$/i.test(v),
  "pve-storage-id": (v) => /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i.test(v),
  "pve-bridge-id": (v) => /^[-_.\w\d]+$/.test(v),
  "address-list": (v) => v.split(/[ ,;]+/).filter((s) => s !== "").every(isIp),
  // Validated raw, then URI-unescaped (reference/proxmox.md §3.5).
  urlencoded: (v) => /^[-%a-zA-Z0-9_.!~*'()]*$/.test(v),
  "pve-qm-ipconfig": (v) =>
    v.split(",").every((part) => {
      const [key, value = ""] = part.split("=", 2)
      if (key === "ip") return value === "dhcp" || /^[\d.]+\/\d{1,2}$/.test(value)
      if (key === "gw") return ipv4.test(value)
      if (key === "ip6") return ["dhcp", "auto"].includes(value) || /^[0-9a-fA-F:]+\/\d{1,3}$/.test(value)
      if (key === "gw6") return isIp(value)
      return false
    })
}

/** Perl's `(?^:…)` is JavaScript's `(?:…)`; JSONSchema.pm anchors every pattern. */
const anchored = (pattern: string) => new RegExp(`^(?:${pattern.replace(/\(\?\^:/g, "(?:")})$`)

const checkScalar = (name: string, spec: ParamSpec, value: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const bad = (why: string) => problems.push(`${name}=${JSON.stringify(value)}: ${why}`)
  switch (spec.type ?? "string") {
    case "integer":
      if (!/^[+-]?\d+$/.test(value)) bad("not an integer")
      break
    case "number":
      if (value.trim() === "" || !Number.isFinite(Number(value))) bad("not a number")
      break
    case "boolean":
      // Form-encoded booleans must be 1/0 (reference/proxmox.md §2.1).
      if (value !== "0" && value !== "1") bad("boolean must be 0 or 1")
      break
    case "string":
      break
    default:
      bad(`unexpected type ${spec.type}`)
  }
  if (spec.type === "integer" || spec.type === "number") {
    const n = Number(value)
    if (spec.minimum !== undefined && n < spec.minimum) bad(`below ${spec.minimum}`)
    if (spec.maximum !== undefined && n > spec.maximum) bad(`above ${spec.maximum}`)
  }
  if (spec.enum !== undefined && spec.enum !== null && !spec.enum.includes(value)) bad("not in enum")
  if (spec.pattern !== undefined && !anchored(spec.pattern).test(value)) bad(`does not match ${spec.pattern}`)
  if (spec.maxLength !== undefined && value.length > spec.maxLength) bad(`longer than ${spec.maxLength}`)
  if (spec.minLength !== undefined && value.length < spec.minLength) bad(`shorter than ${spec.minLength}`)
  if (typeof spec.format === "string") {
    const check = namedFormats[spec.format]
    if (check !== undefined && !check(value)) bad(`not a valid ${spec.format}`)
  } else if (spec.format !== undefined) {
    problems.push(...checkPropertyString(name, spec.format, value))
  }
  return problems
}

const subSpec = (format: { readonly [key: string]: unknown }, key: string): ParamSpec | undefined => {
  const raw = format[key]
  return raw === undefined ? undefined : Schema.decodeUnknownSync(ParamSpec)(raw)
}

/** `[default=]v,key=v,…` against the format's sub-keys, including aliases such as `virtio=<mac>` (§3.5). */
const checkPropertyString = (
  name: string,
  format: { readonly [key: string]: unknown },
  value: string
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const defaultKey = Object.keys(format).find((k) => subSpec(format, k)?.default_key === 1)
  value.split(",").forEach((part, position) => {
    const eq = part.indexOf("=")
    const key = eq === -1 ? (position === 0 ? defaultKey : part) : part.slice(0, eq)
    const sub = eq === -1 ? part : part.slice(eq + 1)
    const spec = key === undefined ? undefined : subSpec(format, key)
    if (key === undefined || spec === undefined) return problems.push(`${name}: unknown key in ${JSON.stringify(part)}`)
    if (spec.alias !== undefined) {
      // `virtio=<mac>`: the key names the model, the value is the aliased key's.
      const model = spec.keyAlias === undefined ? undefined : subSpec(format, spec.keyAlias)
      if (model?.enum !== undefined && model.enum !== null && !model.enum.includes(key)) problems.push(`${name}: ${key} is no ${spec.keyAlias}`)
      return
    }
    problems.push(...checkScalar(`${name}.${key}`, spec, sub))
  })
  return problems
}

const templateRegex = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{([^}]+)\\?\}/g, "(?<$1>[^/]+)")}$`)

/** The spec of `name`, or of its indexed family (`net0` → `net[n]`). */
const specOf = (properties: Readonly<Record<string, ParamSpec>>, name: string): ParamSpec | undefined => {
  const exact = properties[name]
  if (exact !== undefined) return exact
  const indexed = /^(.*?)(\d+)$/.exec(name)
  return indexed === null ? undefined : properties[`${indexed[1]}[n]`]
}

/** Every problem with `request` as sent; empty when the schema accepts it. */
export const problemsWith = (index: ApiIndex, request: ProxmoxRequest): ReadonlyArray<string> => {
  const wire = toWire(request)
  const where = `${request.method} ${request.pathTemplate}`
  const raw = index.get(request.pathTemplate)?.info?.[request.method]
  if (raw === undefined) return [`${where}: no such path and method in the API schema`]
  const properties = Schema.decodeUnknownSync(MethodInfo)(raw).parameters?.properties ?? {}

  const [path = "", query = ""] = wire.target.split("?", 2)
  const match = templateRegex(request.pathTemplate).exec(path)
  if (match === null) return [`${where}: ${path} does not fill the template`]

  const values = new Map<string, Array<string>>()
  const add = (name: string, value: string) => values.set(name, [...(values.get(name) ?? []), value])
  for (const [name, value] of Object.entries(match.groups ?? {})) add(name, decodeURIComponent(value))
  for (const [name, value] of new URLSearchParams(wire.body ?? query)) add(name, value)

  const problems: Array<string> = []
  for (const [name, given] of values) {
    const spec = specOf(properties, name)
    if (spec === undefined) {
      problems.push(`${where}: unknown parameter ${name}`)
      continue
    }
    if (spec.type === "array") {
      if (given.length === 0) problems.push(`${where}: ${name} is empty`)
      continue
    }
    if (given.length !== 1) problems.push(`${where}: ${name} given ${given.length} times`)
    for (const value of given) problems.push(...checkScalar(name, spec, value).map((p) => `${where}: ${p}`))
  }
  for (const [name, spec] of Object.entries(properties)) {
    const required = spec.optional === undefined || spec.optional === 0 || spec.optional === false
    if (required && !name.endsWith("[n]") && !values.has(name)) problems.push(`${where}: missing required ${name}`)
  }
  return problems
}
