// What the VPS console relay sends to the terminal for a batch of browser frames: typed input read together joined
// into one write, a resize kept in its place between the typing around it, oversized frames and malformed resize
// messages dropped (text and binary frames alike).
import { describe, expect, it } from "vitest"
import { consoleInput } from "../../../adapters/http/ConsoleRoute.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const typed = (text: string) => ({ _tag: "Type", data: bytes(text) })

describe("the VPS console's input", () => {
  it("joins consecutive typed frames, text and binary, into one write in their order", () => {
    expect(consoleInput(["ls", bytes(" -l"), "\r"], 64)).toEqual([typed("ls -l\r")])
  })

  it("keeps a resize between the typing before and after it", () => {
    expect(consoleInput(["a", "{\"type\":\"resize\",\"cols\":120,\"rows\":40}", "b"], 64)).toEqual([
      typed("a"),
      { _tag: "Resize", cols: 120, rows: 40 },
      typed("b")
    ])
  })

  it("drops a malformed resize message rather than typing it, and types JSON that is not one", () => {
    expect(consoleInput(["{\"type\":\"resize\",\"cols\":0,\"rows\":40}", "x"], 64)).toEqual([typed("x")])
    expect(consoleInput(["{\"type\":\"other\"}"], 64)).toEqual([typed("{\"type\":\"other\"}")])
    expect(consoleInput(["{not json"], 64)).toEqual([typed("{not json")])
  })

  it("drops frames over the size limit, text or binary, and keeps the rest", () => {
    expect(consoleInput(["x".repeat(65), "ok", new Uint8Array(65)], 64)).toEqual([typed("ok")])
  })

  it("joins typed input up to 16 KiB per write, a larger frame going alone, nothing lost", () => {
    const line = "x".repeat(6 * 1024)
    const big = new Uint8Array(20 * 1024).fill(0x79)
    const steps = consoleInput([line, line, line, big, "z"], 64 * 1024)
    expect(steps.map((s) => (s._tag === "Type" ? s.data.byteLength : -1))).toEqual([12 * 1024, 6 * 1024, 20 * 1024, 1])
    expect(steps[2]).toEqual({ _tag: "Type", data: big })
  })

  it("asks nothing of the terminal for a batch with nothing to send", () => {
    expect(consoleInput(["x".repeat(65)], 64)).toEqual([])
  })
})
