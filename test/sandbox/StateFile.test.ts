// Specification of the state file both sandboxes share (app/sandbox/StateFile.ts): changes coalesce into one write,
// writes never overlap, the last write holds the last state, nothing unchanged is written, and problems are reported
// in the sandbox's own words. The writer is observed, not the disk, except where loading reads a real file; what each
// sandbox keeps is specified by test/sandbox/proxmox/persistence.test.ts and test/sandbox/pterodactyl/stateFile.test.ts.
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StateFile, type StateSource, type WriteFile } from "../../app/sandbox/StateFile.ts"

const until = async (condition: () => boolean, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition still false after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** A source whose document is `encode()`; every saved text restores. */
const sourceOf = (encode: () => string): StateSource => ({ encode, restore: (text) => Result.succeed(text) })

/** A writer that records what it is asked to write. */
const recording = (writes: Array<string>): WriteFile => (_, text) => {
  writes.push(text)
  return Promise.resolve()
}

const fileFor = (source: StateSource, options: { warn?: (m: string) => void; write?: WriteFile; path?: string } = {}) =>
  new StateFile(options.path ?? "/unused", source, {
    sandbox: "sandbox Test",
    seed: "its seed",
    warn: options.warn ?? (() => undefined),
    ...(options.write === undefined ? {} : { write: options.write })
  })

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sandbox-state-file-"))
})
afterAll(() => rm(root, { recursive: true, force: true }))

describe("state file writes", () => {
  it("many changes at once are saved in one write at the end, with the last state", async () => {
    const writes: Array<string> = []
    let state = 0
    const stateFile = fileFor(sourceOf(() => `state ${state}`), { write: recording(writes) })
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
    const stateFile = fileFor(sourceOf(() => state), {
      write: async (_, text) => {
        active++
        overlapped ||= active > 1
        writes.push(text)
        if (text === "a") await new Promise<void>((resolve) => (release = resolve))
        active--
      }
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
    const stateFile = fileFor(sourceOf(() => state), {
      path: "/x/state.json",
      warn: (m) => warnings.push(m),
      write: (_, text) => {
        writes.push(text)
        return text === "a" ? Promise.reject(new Error("disk full")) : Promise.resolve()
      }
    })
    stateFile.changed()
    await until(() => warnings.length === 1)
    expect(warnings[0]).toBe("sandbox Test: could not save state file /x/state.json: disk full")
    state = "b"
    await stateFile.close()
    expect(writes).toEqual(["a", "b"])
  })

  it("an unchanged document is not written again", async () => {
    const writes: Array<string> = []
    const stateFile = fileFor(sourceOf(() => "same"), { write: recording(writes) })
    stateFile.changed()
    await until(() => writes.length === 1)
    stateFile.changed()
    await stateFile.close()
    expect(writes).toEqual(["same"])
  })

  it("a document that cannot be encoded is reported and nothing is written", async () => {
    const warnings: Array<string> = []
    const writes: Array<string> = []
    const stateFile = fileFor(sourceOf(() => {
      throw new Error("cycle")
    }), { path: "/x/state.json", warn: (m) => warnings.push(m), write: recording(writes) })
    await stateFile.close()
    expect(warnings).toEqual(["sandbox Test: could not encode state for /x/state.json: cycle"])
    expect(writes).toEqual([])
  })
})

describe("state file loading", () => {
  let nextCase = 0
  const savedFile = async (text: string) => {
    const dir = await mkdtemp(join(root, `case-${nextCase++}-`))
    const path = join(dir, "state.json")
    await writeFile(path, text)
    return { dir, path }
  }

  it("the text a restore returns counts as on disk: encoding the same text after the load writes nothing", async () => {
    const { path } = await savedFile("as saved by an older version")
    const writes: Array<string> = []
    const restored: Array<string> = []
    const source: StateSource = {
      encode: () => "canonical",
      restore: (text) => {
        restored.push(text)
        return Result.succeed("canonical")
      }
    }
    const stateFile = fileFor(source, { path, write: recording(writes) })
    await stateFile.load()
    stateFile.changed()
    await stateFile.close()
    expect(restored).toEqual(["as saved by an older version"])
    expect(writes).toEqual([])
  })

  it("no file leaves the seed: nothing is restored, and the first save writes", async () => {
    const dir = await mkdtemp(join(root, `case-${nextCase++}-`))
    const writes: Array<string> = []
    let restores = 0
    const stateFile = fileFor({
      encode: () => "seed",
      restore: () => {
        restores++
        return Result.succeed("seed")
      }
    }, { path: join(dir, "absent.json"), write: recording(writes) })
    await stateFile.load()
    await stateFile.close()
    expect(restores).toBe(0)
    expect(writes).toEqual(["seed"])
  })

  it("an invalid file is moved aside and reported in the sandbox's words", async () => {
    const { dir, path } = await savedFile("garbage")
    const warnings: Array<string> = []
    const stateFile = fileFor({ encode: () => "seed", restore: () => Result.fail("not valid JSON") }, {
      path,
      warn: (m) => warnings.push(m)
    })
    await stateFile.load()
    const aside = (await readdir(dir)).filter((name) => name.startsWith("state.json.invalid-"))
    expect(aside).toHaveLength(1)
    expect(warnings).toEqual([
      `sandbox Test: state file ${path} is invalid (not valid JSON); it was moved to ${join(dir, aside[0] ?? "")}, ` +
      "and the sandbox starts with its seed only"
    ])
  })

  it("a file that exists but cannot be read throws, naming the sandbox", async () => {
    const stateFile = fileFor(sourceOf(() => "seed"), { path: root })
    await expect(stateFile.load()).rejects.toThrow(`sandbox Test: cannot read state file ${root}: `)
  })
})
