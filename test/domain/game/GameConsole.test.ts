// What the customer may send a game console upstream: commands, power states, and requests for logs and stats.
import { describe, expect, it } from "vitest"
import { allowedConsoleEvent as allowed } from "../../../domain/game/GameConsole.ts"

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

})
