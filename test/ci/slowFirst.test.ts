// The list of files `npm test` starts first (test/support/slowFirst.ts) names files that exist, longest first: a file
// renamed or removed would otherwise silently fall back to vitest's order.
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { slowFiles } from "../support/slowFirst.ts"

const root = resolve(import.meta.dirname, "../..")

describe("the files started first", () => {
  it("each exists, once", () => {
    for (const [file] of slowFiles) expect(existsSync(join(root, file)), file).toBe(true)
    expect(new Set(slowFiles.map(([file]) => file)).size).toBe(slowFiles.length)
  })

  it("are listed longest first", () => {
    const seconds = slowFiles.map(([, s]) => s)
    expect(seconds).toEqual([...seconds].sort((a, b) => b - a))
  })
})
