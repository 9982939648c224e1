// IPv4 arithmetic for the catalog's address pools: parsing dotted quads and CIDR blocks, and the host addresses
// of a pool. Addresses are unsigned 32-bit numbers internally; everything here is pure.
import { Result } from "effect"

export interface Cidr {
  /** The network address, as an unsigned 32-bit number. */
  readonly network: number
  readonly prefixLength: number
}

const OCTET = /^(0|[1-9][0-9]{0,2})$/

/** A dotted quad as a number; leading zeros are refused (some tools read them as octal). */
export const parseAddress = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

export const formatAddress = (value: number): string =>
  [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".")

const size = (prefixLength: number) => 2 ** (32 - prefixLength)

/** `203.0.113.0/28`; the address must be the network address (no host bits set). */
export const parseCidr = (text: string): Result.Result<Cidr, string> => {
  const match = /^([^/]+)\/(0|[1-9][0-9]?)$/.exec(text)
  const address = match?.[1] === undefined ? undefined : parseAddress(match[1])
  const prefixLength = Number(match?.[2])
  if (address === undefined || !(prefixLength <= 32)) {
    return Result.fail(`"${text}" is not an IPv4 CIDR block like 203.0.113.0/28`)
  }
  const network = address - (address % size(prefixLength))
  if (network !== address) {
    return Result.fail(`"${text}" has host bits set; the block is ${formatAddress(network)}/${prefixLength}`)
  }
  return Result.succeed({ network, prefixLength })
}

export const formatCidr = (cidr: Cidr) => `${formatAddress(cidr.network)}/${cidr.prefixLength}`

export const contains = (cidr: Cidr, address: number) => address >= cidr.network && address < cidr.network + size(cidr.prefixLength)

export const overlaps = (a: Cidr, b: Cidr) => contains(a, b.network) || contains(b, a.network)

export const broadcastOf = (cidr: Cidr) => cidr.network + size(cidr.prefixLength) - 1

/**
 * Whether `address` may serve as the gateway of `cidr`: inside the block, and not its network or broadcast
 * address. A /31 (RFC 3021, point-to-point) has neither, so either of its two addresses may be the gateway.
 */
export const gatewayProblem = (cidr: Cidr, address: number): string | undefined => {
  if (!contains(cidr, address)) return `${formatAddress(address)} is outside ${formatCidr(cidr)}`
  if (cidr.prefixLength >= 31) return undefined
  if (address === cidr.network) return `${formatAddress(address)} is the network address of ${formatCidr(cidr)}`
  if (address === broadcastOf(cidr)) return `${formatAddress(address)} is the broadcast address of ${formatCidr(cidr)}`
  return undefined
}

/**
 * The addresses a pool can hand out, in numeric order: every address of the block except the network address,
 * the broadcast address and the gateway. A /31 has no network or broadcast address (RFC 3021), so it yields the
 * one address that is not the gateway; a /32 yields nothing, since its only address must be the gateway.
 */
export const hostAddresses = (cidr: Cidr, gateway: number): ReadonlyArray<string> => {
  const first = cidr.prefixLength >= 31 ? cidr.network : cidr.network + 1
  const last = cidr.prefixLength >= 31 ? broadcastOf(cidr) : broadcastOf(cidr) - 1
  const hosts: Array<string> = []
  for (let address = first; address <= last; address++) {
    if (address !== gateway) hosts.push(formatAddress(address))
  }
  return hosts
}

/** Numeric order of dotted quads (`203.0.113.9` before `203.0.113.10`); unparsable text sorts last. */
export const compareAddresses = (a: string, b: string) =>
  (parseAddress(a) ?? Number.MAX_SAFE_INTEGER) - (parseAddress(b) ?? Number.MAX_SAFE_INTEGER)
