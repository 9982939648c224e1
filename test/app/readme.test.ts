// The README stays true about settings: every environment variable app/Config.ts reads has a row in its table.
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")

describe("the README's settings table", () => {
  it("names every setting the server reads", () => {
    const config = readFileSync(resolve(root, "app/Config.ts"), "utf8")
    const names = [...config.matchAll(/"([A-Z][A-Z0-9_]{2,})"/g)].map((m) => m[1]!)
    expect(names.length).toBeGreaterThan(30)
    const readme = readFileSync(resolve(root, "README.md"), "utf8")
    const table = readme.slice(readme.indexOf("## Settings"), readme.indexOf("## Real services"))
    const missing = [...new Set(names)].filter((name) => !table.includes(`\`${name}\``))
    expect(missing).toEqual([])
  })
})
