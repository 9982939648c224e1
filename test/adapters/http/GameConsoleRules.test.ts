// What the game console relay lets through, each way: the customer may only send commands, power states, and ask
// for logs and stats; from Wings, the admin-only streams are dropped and daemon errors (whose admin-token text
// can name the node) become a generic line; everything else goes out as Wings sent it.
import { describe, expect, it } from "vitest"
import { allowed, outbound } from "../../../adapters/http/GameConsoleRoute.ts"

const event = (name: string, ...args: Array<string>) => ({ event: name, args })

describe("the game console's rules", () => {
  it("lets the customer send commands, power states, logs and stats requests, and nothing else", () => {
    expect(allowed(event("send command", "say hi"))).toBe(true)
    for (const state of ["start", "stop", "restart", "kill"]) expect(allowed(event("set state", state))).toBe(true)
    expect(allowed(event("send logs"))).toBe(true)
    expect(allowed(event("send stats"))).toBe(true)
    expect(allowed(event("set state", "explode"))).toBe(false)
    expect(allowed(event("set state"))).toBe(false)
    expect(allowed(event("send command", "a", "b"))).toBe(false)
    expect(allowed(event("send command", "x".repeat(4097)))).toBe(false)
    for (const name of ["auth", "send install logs", "transfer", "", "SEND COMMAND"]) expect(allowed(event(name, "x"))).toBe(false)
  })

  it("drops install and transfer output, hides daemon error text, passes the rest unchanged", () => {
    expect(outbound(event("install output", "Pulling from 10.0.0.5:5000"))).toBeUndefined()
    expect(outbound(event("transfer logs", "to node-2.internal"))).toBeUndefined()
    expect(outbound(event("transfer status", "starting"))).toBeUndefined()
    const daemon = outbound(event("daemon error", "Error Event [x]: dial tcp 10.0.0.7:8080: connection refused"))
    expect(daemon).toBe(JSON.stringify({ event: "daemon error", args: ["The server reported an error."] }))
    expect(outbound(event("console output", "[Server] hi"))).toBe(JSON.stringify({ event: "console output", args: ["[Server] hi"] }))
    expect(outbound(event("status", "running"))).toBe(JSON.stringify({ event: "status", args: ["running"] }))
    expect(outbound({ event: "stats", args: ["{}"], raw: "{\"event\":\"stats\",\"args\":[\"{}\"]}" })).toBe("{\"event\":\"stats\",\"args\":[\"{}\"]}")
    expect(outbound(event("token expiring"))).toBe(JSON.stringify({ event: "token expiring" }))
  })
})
