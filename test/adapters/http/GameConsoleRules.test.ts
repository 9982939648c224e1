// What the game console relay lets through from Wings: the admin-only streams are dropped and daemon errors (whose
// admin-token text can name the node) become a generic line; everything else goes out as Wings sent it. What a
// customer's frame asks is decoded here (whether it may be sent is the domain's rule: test/domain/game/GameConsole.test.ts).
import { describe, expect, it } from "vitest"
import { inbound, outbound } from "../../../adapters/http/GameConsoleRoute.ts"

const event = (name: string, ...args: Array<string>) => ({ event: name, args })

describe("the game console's rules", () => {
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

  it("reads a command, a power state, a logs or stats request from the customer's frame, and nothing else", () => {
    expect(inbound(event("send command", "say hi"))).toEqual({ _tag: "Command", line: "say hi" })
    for (const signal of ["start", "stop", "restart", "kill"]) expect(inbound(event("set state", signal))).toEqual({ _tag: "Power", signal })
    expect(inbound(event("send logs"))).toEqual({ _tag: "SendLogs" })
    expect(inbound(event("send stats"))).toEqual({ _tag: "SendStats" })
    expect(inbound(event("set state", "explode"))).toBeUndefined()
    expect(inbound(event("set state"))).toBeUndefined()
    expect(inbound(event("send command", "a", "b"))).toBeUndefined()
    for (const name of ["auth", "send install logs", "transfer", "", "SEND COMMAND"]) expect(inbound(event(name, "x"))).toBeUndefined()
  })
})
