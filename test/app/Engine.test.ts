// The workflow runner's default address (RUNNER_HOST unset): the machine's private address, as the other replicas of a
// container network reach it, and never a public one (the runner protocol has no authentication of its own).
import type { NetworkInterfaceInfo } from "node:os"
import { describe, expect, it } from "vitest"
import { privateHost } from "../../app/Engine.ts"

const v4 = (address: string, internal = false): NetworkInterfaceInfo =>
  ({ address, netmask: "255.255.255.0", family: "IPv4", mac: "02:42:ac:11:00:02", internal, cidr: `${address}/24` })
const v6 = (address: string): NetworkInterfaceInfo =>
  ({ address, netmask: "ffff:ffff:ffff:ffff::", family: "IPv6", mac: "02:42:ac:11:00:02", internal: false, cidr: `${address}/64`, scopeid: 0 })

describe("the runner's default address", () => {
  it("is the machine's private IPv4 address, not a public one beside it", () => {
    expect(privateHost({ lo: [v4("127.0.0.1", true)], eth0: [v4("203.0.113.7")], eth1: [v4("10.1.2.3")] })).toBe("10.1.2.3")
    expect(privateHost({ eth0: [v6("fe80::1"), v4("172.17.0.2")] })).toBe("172.17.0.2")
  })

  it("is a unique-local IPv6 address when there is no private IPv4 one", () => {
    expect(privateHost({ eth0: [v4("203.0.113.7"), v6("2001:db8::7"), v6("fd12:3456::7")] })).toBe("fd12:3456::7")
  })

  it("is loopback on a machine with only public addresses", () => {
    expect(privateHost({ lo: [v4("127.0.0.1", true)], eth0: [v4("192.0.2.2"), v6("2001:db8::2")] })).toBe("127.0.0.1")
    expect(privateHost({})).toBe("127.0.0.1")
  })
})
