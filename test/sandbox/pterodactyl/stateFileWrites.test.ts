// Specification of how the sandbox Pterodactyl's state file writes: changes coalesce into one write, writes never
// overlap, and the last write holds the last state. The writer is observed, not the disk (stateFile.test.ts covers it).
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { StateFile } from "../../../app/sandbox/pterodactyl/StateFile.ts"

const until = async (condition: () => boolean, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition still false after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe("state file writes", () => {
  it("many changes at once are saved in one write at the end, with the last state", async () => {
    const writes: Array<string> = []
    let state = 0
    const stateFile = new StateFile("/unused", { encode: () => `state ${state}`, restore: () => Result.void }, () => undefined,
      (_, text) => {
        writes.push(text)
        return Promise.resolve()
      })
    for (let i = 1; i <= 50; i++) {
      state = i
      stateFile.changed()
    }
    await stateFile.close()
    expect(writes).toEqual(["state 50"])
  })

  it("writes never overlap: a change during a write is saved by the next one", async () => {
    const writes: Array<string> = []
    let active = 0
    let overlapped = false
    let release: () => void = () => undefined
    let state = "a"
    const stateFile = new StateFile("/unused", { encode: () => state, restore: () => Result.void }, () => undefined,
      async (_, text) => {
        active++
        overlapped ||= active > 1
        writes.push(text)
        if (text === "a") await new Promise<void>((resolve) => (release = resolve))
        active--
      })
    stateFile.changed()
    await until(() => writes.length === 1)
    state = "b"
    stateFile.changed()
    const closing = stateFile.close()
    release()
    await closing
    expect(writes).toEqual(["a", "b"])
    expect(overlapped).toBe(false)
  })


  it("a failed write is reported and the next change writes again", async () => {
    const warnings: Array<string> = []
    const writes: Array<string> = []
    let state = "a"
    const stateFile = new StateFile("/x/state.json", { encode: () => state, restore: () => Result.void }, (m) => warnings.push(m),
      (_, text) => {
        writes.push(text)
        return text === "a" ? Promise.reject(new Error("disk full")) : Promise.resolve()
      })
    stateFile.changed()
    await until(() => warnings.length === 1)
    expect(warnings[0]).toBe("sandbox Pterodactyl: could not save state file /x/state.json: disk full")
    state = "b"
    await stateFile.close()
    expect(writes).toEqual(["a", "b"])
  })

  it("an unchanged document is not written again", async () => {
    const writes: Array<string> = []
    const stateFile = new StateFile("/unused", { encode: () => "same", restore: () => Result.void }, () => undefined,
      (_, text) => {
        writes.push(text)
        return Promise.resolve()
      })
    stateFile.changed()
    await until(() => writes.length === 1)
    stateFile.changed()
    await stateFile.close()
    expect(writes).toEqual(["same"])
  })
})
