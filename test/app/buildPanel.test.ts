// The panel's build stamp: the content hash changes with any source, index.html or public/ file, so `npm start`
// rebuilds exactly when the dist is missing or was built from other sources.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { isPanelCurrent, sourceHash } from "../../app/buildPanel.ts"

const root = mkdtempSync(join(tmpdir(), "zh-panel-"))
const source = join(root, "web")
const dist = join(source, "dist")
mkdirSync(join(source, "src"), { recursive: true })
mkdirSync(join(source, "public"), { recursive: true })
writeFileSync(join(source, "index.html"), "<!doctype html>")
writeFileSync(join(source, "vite.config.ts"), "export default {}")
writeFileSync(join(source, "src", "main.ts"), "console.log(1)")
writeFileSync(join(source, "public", "boot.js"), "void 0")

afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("buildPanel", () => {
  it("hashes the sources deterministically, and differently when any of them changes", () => {
    const first = sourceHash(source)
    expect(sourceHash(source)).toBe(first)
    for (const [file, content] of [
      [join(source, "src", "main.ts"), "console.log(2)"],
      [join(source, "index.html"), "<!doctype html><p>"],
      [join(source, "public", "boot.js"), "void 1"],
      [join(source, "vite.config.ts"), "export default { base: '/' }"],
      [join(source, "src", "new.ts"), ""]
    ] as const) {
      const before = sourceHash(source)
      writeFileSync(file, content)
      expect(sourceHash(source), file).not.toBe(before)
    }
  })

  it("says a dist is current only when it is whole and stamped with the sources' hash", () => {
    expect(isPanelCurrent(source, dist)).toBe(false)
    mkdirSync(dist, { recursive: true })
    writeFileSync(join(dist, ".build-hash"), `${sourceHash(source)}\n`)
    expect(isPanelCurrent(source, dist)).toBe(false)
    writeFileSync(join(dist, "index.html"), "<!doctype html>")
    expect(isPanelCurrent(source, dist)).toBe(true)
    writeFileSync(join(source, "src", "main.ts"), "console.log(3)")
    expect(isPanelCurrent(source, dist)).toBe(false)
  })
})
