// Parameter verification as pve-common's JSONSchema.pm does it (check_object/check_prop/check_type), with its
// messages, so a client sees the same 400 `errors` map as from a real PVE (reference/proxmox.md §2.1–2.2).
import { isIP } from "node:net"
import type { ParamSpec } from "./apiSchema.ts"
import { paramError } from "./PveError.ts"

/** A parameter as it arrives: a form value (repeated keys give arrays) or any JSON value. */
export type RawParams = Readonly<Record<string, unknown>>

/** A verified parameter: booleans and integers are numbers, arrays hold strings. */
export type ParamValue = string | number | ReadonlyArray<string>

const INTEGER = /^[+-]?\d+$/
const NUMBER = /^[+-]?(\d+\.\d*|\d*\.\d+|\d+)([eE][+-]?\d+)?$/

/** The schema entry for `key`, resolving `net3` to `net[n]` when 3 is within range. */
export const specFor = (
  schema: Readonly<Record<string, ParamSpec>>,
  key: string
): ParamSpec | undefined => {
  const direct = schema[key]
  if (direct !== undefined && direct.maxIndex === undefined) return direct
  const m = /^(\D+?)(\d+)$/.exec(key)
  if (m === null) return undefined
  const [, prefix = "", index = ""] = m
  const indexed = schema[`${prefix}[n]`]
  if (indexed?.maxIndex === undefined || String(Number(index)) !== index) return undefined
  return Number(index) <= indexed.maxIndex ? indexed : undefined
}

const perlRef = (value: unknown): string | undefined => {
  if (Array.isArray(value)) return "ARRAY"
  if (typeof value === "boolean") return "JSON::PP::Boolean"
  if (typeof value === "object" && value !== null) return "HASH"
  return undefined
}

const splitList = (value: string) => value.split(/[;,\0\s]+/).filter((item) => item !== "")

const CONFIGID = /^[a-z][a-z0-9_-]+$/i
/** `$PVE_TAG_RE` (pve-common JSONSchema.pm), each tag of a `pve-tag-list`. */
export const TAG = /^[a-z0-9_][a-z0-9_\-+.]*$/i
const isIpv4Cidr = (value: string) => {
  const [ip, bits, ...rest] = value.split("/")
  return rest.length === 0 && ip !== undefined && isIP(ip) === 4 && bits !== undefined && /^\d+$/.test(bits) &&
    Number(bits) > 7 && Number(bits) <= 32
}
const isIpv6Cidr = (value: string) => {
  const [ip, bits, ...rest] = value.split("/")
  return rest.length === 0 && ip !== undefined && isIP(ip) === 6 && bits !== undefined && /^\d+$/.test(bits) &&
    Number(bits) > 7 && Number(bits) <= 128
}

/** `pve-qm-ipconfig`: `[ip=<IPv4/CIDR|dhcp>][,gw=<IPv4>][,ip6=<IPv6/CIDR|dhcp|auto>][,gw6=<IPv6>]`. */
const checkIpconfig = (value: string, name: string): string | undefined => {
  const seen = new Map<string, string>()
  for (const part of value.split(",")) {
    const [key = "", v = "", ...rest] = part.split("=")
    if (rest.length > 0 || v === "") return `format error\n${name}: unable to parse '${part}'\n`
    if (!["ip", "gw", "ip6", "gw6"].includes(key)) {
      return `format error\n${name}.${key}: property is not defined in schema and the schema does not allow additional properties\n`
    }
    seen.set(key, v)
  }
  const ip = seen.get("ip")
  const ip6 = seen.get("ip6")
  const gw = seen.get("gw")
  const gw6 = seen.get("gw6")
  if (ip !== undefined && ip !== "dhcp" && ip !== "manual" && !isIpv4Cidr(ip)) {
    return `format error\n${name}.ip: value does not look like a valid ipv4 network configuration\n`
  }
  if (ip6 !== undefined && !["dhcp", "auto", "manual"].includes(ip6) && !isIpv6Cidr(ip6)) {
    return `format error\n${name}.ip6: value does not look like a valid ipv6 network configuration\n`
  }
  if (gw !== undefined && isIP(gw) !== 4) return `format error\n${name}.gw: value does not look like a valid IPv4 address\n`
  if (gw6 !== undefined && isIP(gw6) !== 6) return `format error\n${name}.gw6: value does not look like a valid IPv6 address\n`
  if (gw !== undefined && (ip === undefined || ip === "dhcp")) return "gateway specified without specifying an IP address\n"
  if (gw6 !== undefined && (ip6 === undefined || ip6 === "dhcp" || ip6 === "auto")) {
    return "gateway specified without specifying an IP address\n"
  }
  return undefined
}

/** The named formats the sandbox checks; the others are accepted unchecked (see the module README). */
const checkFormat = (format: string, value: string, name: string): string | undefined => {
  switch (format) {
    case "pve-vmid":
      return /^[1-9][0-9]{2,8}$/.test(value) ? undefined : "value does not look like a valid VM ID\n"
    case "pve-node":
      return /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)$/.test(value)
        ? undefined
        : "value does not look like a valid node name\n"
    case "pve-configid":
      return CONFIGID.test(value) ? undefined : `invalid configuration ID '${value}'\n`
    case "pve-tag-list":
      for (const item of splitList(value)) if (!TAG.test(item)) return "invalid characters in tag\n"
      return undefined
    case "pve-configid-list":
      for (const item of splitList(value)) if (!CONFIGID.test(item)) return `invalid configuration ID '${item}'\n`
      return undefined
    case "pve-storage-id":
      return /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i.test(value) ? undefined : `storage ID '${value}' contains illegal characters\n`
    case "dns-name":
      return /^(([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)\.)*([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)$/.test(value)
        ? undefined
        : "value does not look like a valid DNS name\n"
    case "urlencoded":
      return /^[-%a-zA-Z0-9_.!~*'()]*$/.test(value) ? undefined : `invalid urlencoded string: ${value}\n`
    case "address-list":
      for (const item of splitList(value)) {
        if (isIP(item) === 0) return `value does not look like a valid address: ${item}\n`
      }
      return undefined
    case "pve-qm-ipconfig":
      return checkIpconfig(value, name)
    default:
      return undefined
  }
}

/** One scalar against its spec, in JSONSchema.pm's order: format, pattern, length, range, enum. */
const checkScalar = (spec: ParamSpec, text: string, name: string): string | undefined => {
  if (spec.format !== undefined) {
    const problem = checkFormat(spec.format, text, name)
    if (problem !== undefined) return `invalid format - ${problem}`
  }
  if (spec.pattern !== undefined && !new RegExp(`^(?:${spec.pattern})$`).test(text)) {
    return "value does not match the regex pattern"
  }
  const length = [...text].length
  if (spec.maxLength !== undefined && length > spec.maxLength) return `value may only be ${spec.maxLength} characters long`
  if (spec.minLength !== undefined && length < spec.minLength) return `value must be at least ${spec.minLength} characters long`
  if (NUMBER.test(text)) {
    if (spec.maximum !== undefined && Number(text) > spec.maximum) return `value must have a maximum value of ${spec.maximum}`
    if (spec.minimum !== undefined && Number(text) < spec.minimum) return `value must have a minimum value of ${spec.minimum}`
  }
  if (spec.enum !== undefined && !spec.enum.includes(text)) {
    return `value '${text}' does not have a value in the enumeration '${spec.enum.join(", ")}'`
  }
  return undefined
}

const verifyOne = (
  spec: ParamSpec,
  raw: unknown,
  name: string,
  errors: Record<string, string>
): ParamValue | undefined => {
  if (spec.type === "array") {
    const items = Array.isArray(raw) ? raw : [raw]
    const out: Array<string> = []
    items.forEach((item, i) => {
      const ref = perlRef(item)
      if (ref !== undefined) errors[`${name}[${i}]`] ??= `type check ('string') failed - got ${ref}`
      else out.push(String(item))
    })
    return out
  }
  if (typeof raw === "boolean" && spec.type === "boolean") return raw ? 1 : 0
  // RESTHandler joins repeated values of `…-list` formats with commas (reference/proxmox.md §2.1).
  if (Array.isArray(raw) && spec.type === "string" && spec.format?.endsWith("-list") === true && raw.every((v) => perlRef(v) === undefined)) {
    return verifyOne(spec, raw.map(String).join(","), name, errors)
  }
  const ref = perlRef(raw)
  if (ref !== undefined) {
    errors[name] = `type check ('${spec.type}') failed - got ${ref}`
    return undefined
  }
  const text = String(raw)
  if (spec.type === "boolean" && text !== "0" && text !== "1") {
    errors[name] = `type check ('boolean') failed - got '${text}'`
    return undefined
  }
  if (spec.type === "integer" && !INTEGER.test(text)) {
    errors[name] = `type check ('integer') failed - got '${text}'`
    return undefined
  }
  if (spec.type === "number" && !NUMBER.test(text)) {
    errors[name] = `type check ('number') failed - got '${text}'`
    return undefined
  }
  const problem = checkScalar(spec, text, name)
  if (problem !== undefined) {
    errors[name] = problem
    return undefined
  }
  return spec.type === "string" ? text : Number(text)
}

/**
 * Verifies `raw` against an endpoint's schema (additionalProperties 0) and returns the normalised values, or throws
 * the 400 PveError with every offending parameter.
 */
export const validateParams = (
  schema: Readonly<Record<string, ParamSpec>>,
  raw: RawParams
): ReadonlyMap<string, ParamValue> => {
  const errors: Record<string, string> = {}
  const out = new Map<string, ParamValue>()
  for (const [name, spec] of Object.entries(schema)) {
    if (spec.maxIndex !== undefined || spec.optional === true) continue
    if (raw[name] === undefined || raw[name] === null) errors[name] = "property is missing and it is not optional"
  }
  for (const [name, value] of Object.entries(raw)) {
    const spec = specFor(schema, name)
    if (spec === undefined) {
      errors[name] = "property is not defined in schema and the schema does not allow additional properties"
      continue
    }
    if (value === undefined || value === null) continue
    if (spec.requires !== undefined && (raw[spec.requires] === undefined || raw[spec.requires] === null)) {
      errors[spec.requires] ??= `missing property - '${name}' requires this property`
    }
    const verified = verifyOne(spec, value, name, errors)
    if (verified !== undefined) out.set(name, verified)
  }
  if (Object.keys(errors).length > 0) throw paramError(errors)
  return out
}
