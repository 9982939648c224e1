// What the customer may send a game console upstream: a command a person could have typed, and any power state,
// logs or stats request (which requests a frame can name is the relay's decoding: test/adapters/http/GameConsoleRules.test.ts).
import { describe, expect, it } from "vitest"
import { allowedConsoleRequest as allowed } from "../../../domain/game/GameConsole.ts"

describe("the game console's rules", () => {
  it("lets the customer send commands up to 4096 characters, power states, logs and stats requests", () => {
    expect(allowed({ _tag: "Command", line: "say hi" })).toBe(true)
    expect(allowed({ _tag: "Command", line: "x".repeat(4096) })).toBe(true)
    expect(allowed({ _tag: "Command", line: "x".repeat(4097) })).toBe(false)
    for (const signal of ["start", "stop", "restart", "kill"] as const) expect(allowed({ _tag: "Power", signal })).toBe(true)
    expect(allowed({ _tag: "SendLogs" })).toBe(true)
    expect(allowed({ _tag: "SendStats" })).toBe(true)
  })
})
