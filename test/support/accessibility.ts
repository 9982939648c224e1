// axe-core run inside a Chromium page: the violations a serious or critical impact, for a test to expect none of.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"

// Evaluated through the debugging protocol: the panel's Content-Security-Policy (script-src 'self') stays as it is.
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/** The page's serious and critical accessibility violations, as axe-core finds them now. */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.evaluate(axeSource)
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: Array<string> }> }> }> } }).axe
    const { violations } = await axe.run()
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }))
  })
}
