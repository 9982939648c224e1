// IPv4 arithmetic of the address pools.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import {
  compareAddresses,
  type Cidr,
  gatewayProblem,
  hostAddresses,
  overlaps,
  parseAddress,
  parseCidr
} from "../../../domain/catalog/ipv4.ts"

const cidr = (text: string): Cidr => Result.getOrThrow(parseCidr(text))
const address = (text: string) => parseAddress(text) ?? assert.fail(`not an address: ${text}`)

describe("IPv4 addresses and blocks", () => {
  it("reads a dotted quad as an unsigned number", () => {
    assert.strictEqual(parseAddress("203.0.113.10"), 203 * 2 ** 24 + 113 * 256 + 10)
    assert.strictEqual(parseAddress("255.255.255.255"), 2 ** 32 - 1)
    assert.strictEqual(parseAddress("0.0.0.0"), 0)
  })

  it("refuses what is not a plain dotted quad, leading zeros included (read as octal by some tools)", () => {
    for (const text of ["203.0.113", "203.0.113.1.2", "256.0.0.1", "203.0.113.010", "203.0.113.-1", "a.b.c.d", " 1.2.3.4", ""]) {
      assert.isUndefined(parseAddress(text), text)
    }
  })

  it("reads a CIDR block whose address is its network address", () => {
    assert.deepStrictEqual(parseCidr("203.0.113.0/28"), Result.succeed({ network: address("203.0.113.0"), prefixLength: 28 }))
    assert.deepStrictEqual(parseCidr("203.0.113.7/32"), Result.succeed({ network: address("203.0.113.7"), prefixLength: 32 }))
  })

  it("refuses a block with host bits set, naming the block that was probably meant", () => {
    assert.deepStrictEqual(parseCidr("203.0.113.5/28"), Result.fail(`"203.0.113.5/28" has host bits set; the block is 203.0.113.0/28`))
  })

  it("refuses malformed blocks", () => {
    for (const text of ["203.0.113.0", "203.0.113.0/33", "203.0.113.0/", "203.0.113.0/028", "/24", "203.0.113.0/2a"]) {
      assert.isTrue(Result.isFailure(parseCidr(text)), text)
    }
  })

  it("lists the hosts of a block without network, broadcast and gateway, in numeric order", () => {
    const hosts = hostAddresses(cidr("203.0.113.0/28"), address("203.0.113.1"))
    assert.deepStrictEqual(hosts, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14].map((n) => `203.0.113.${n}`))
  })

  it("a gateway elsewhere in the block is skipped where it falls", () => {
    assert.deepStrictEqual(hostAddresses(cidr("198.51.100.0/29"), address("198.51.100.6")), [1, 2, 3, 4, 5].map((n) => `198.51.100.${n}`))
  })

  it("a /31 is point-to-point (RFC 3021): no network or broadcast address, so one host beside the gateway", () => {
    assert.deepStrictEqual(hostAddresses(cidr("192.0.2.0/31"), address("192.0.2.0")), ["192.0.2.1"])
    assert.isUndefined(gatewayProblem(cidr("192.0.2.0/31"), address("192.0.2.1")))
  })

  it("a /32 has no host: its only address must be the gateway", () => {
    assert.deepStrictEqual(hostAddresses(cidr("192.0.2.9/32"), address("192.0.2.9")), [])
  })

  it("a gateway must be inside the block and neither its network nor its broadcast address", () => {
    const block = cidr("203.0.113.0/28")
    assert.isUndefined(gatewayProblem(block, address("203.0.113.14")))
    assert.strictEqual(gatewayProblem(block, address("203.0.113.16")), "203.0.113.16 is outside 203.0.113.0/28")
    assert.strictEqual(gatewayProblem(block, address("203.0.113.0")), "203.0.113.0 is the network address of 203.0.113.0/28")
    assert.strictEqual(gatewayProblem(block, address("203.0.113.15")), "203.0.113.15 is the broadcast address of 203.0.113.0/28")
  })

  it("blocks overlap when one contains the other's network address", () => {
    assert.isTrue(overlaps(cidr("10.0.0.0/16"), cidr("10.0.5.0/24")))
    assert.isTrue(overlaps(cidr("10.0.5.0/24"), cidr("10.0.0.0/16")))
    assert.isFalse(overlaps(cidr("10.0.0.0/25"), cidr("10.0.0.128/25")))
  })

  it("sorts dotted quads numerically, not as text", () => {
    assert.deepStrictEqual(["10.0.0.10", "10.0.0.9", "9.255.255.255", "10.0.1.0"].sort(compareAddresses), [
      "9.255.255.255",
      "10.0.0.9",
      "10.0.0.10",
      "10.0.1.0"
    ])
  })
})
