// IPv4 for the catalog's address pools: dotted quads and CIDR blocks are read and written by effect's strict parsers
// (effect/net: no leading zeros, no host bits, no padding), and the pool arithmetic — which addresses a pool hands
// out, which gateway is valid — works on addresses as unsigned 32-bit numbers. Everything here is pure.
import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"

export interface Cidr {
  /** The network address, as an unsigned 32-bit number. */
  readonly network: number
  readonly prefixLength: number
}

const toNumber = (address: NetAddress.Ipv4Address) =>
  NetAddress.ipv4ToOctets(address).reduce((value, octet) => value * 256 + octet, 0)

const toAddress = (value: number) =>
  NetAddress.ipv4FromOctets([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255])

const toNetwork = (cidr: Cidr) => IpNetwork.makeUnsafe(Result.getOrThrow(toAddress(cidr.network)), cidr.prefixLength)

/** A dotted quad as a number; leading zeros are refused (some tools read them as octal). */
export const parseAddress = (text: string): number | undefined =>
  Result.getOrUndefined(Result.map(NetAddress.ipv4FromString(text), toNumber))

export const formatAddress = (value: number): string => NetAddress.formatIp(Result.getOrThrow(toAddress(value)))

/** `203.0.113.0/28`; the address must be the network address (no host bits set). */
export const parseCidr = (text: string): Result.Result<Cidr, string> => {
  const block = IpNetwork.ipv4FromString(text)
  if (Result.isSuccess(block)) {
    return Result.succeed({ network: toNumber(block.success.address), prefixLength: block.success.prefixLength })
  }
  // Refused: say which block was meant when only host bits are wrong.
  const [addressText = "", prefixText = "", ...rest] = text.split("/")
  const address = NetAddress.ipv4FromString(addressText)
  const meant = rest.length === 0 && Result.isSuccess(address) && /^(0|[1-9][0-9]?)$/.test(prefixText)
    ? IpNetwork.fromAddress(address.success, Number(prefixText))
    : undefined
  return meant !== undefined && Result.isSuccess(meant)
    ? Result.fail(`"${text}" has host bits set; the block is ${IpNetwork.format(meant.success)}`)
    : Result.fail(`"${text}" is not an IPv4 CIDR block like 203.0.113.0/28`)
}

export const formatCidr = (cidr: Cidr) => IpNetwork.format(toNetwork(cidr))

export const contains = (cidr: Cidr, address: number) =>
  Result.match(toAddress(address), { onFailure: () => false, onSuccess: (a) => IpNetwork.contains(toNetwork(cidr), a) })

export const overlaps = (a: Cidr, b: Cidr) => IpNetwork.overlaps(toNetwork(a), toNetwork(b))

export const broadcastOf = (cidr: Cidr) => toNumber(IpNetwork.lastAddress(toNetwork(cidr)))

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
