// The accessibility check of the browser tests: axe-core (the dev dependency, never a CDN) injected into a playwright
// page, run on the whole document, and its violations answered in a short form a failing assertion can print.
import type axeCore from "axe-core"
import type { ImpactValue } from "axe-core"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"

declare global {
  interface Window {
    /** Set by axe.min.js once injected. */
    axe?: typeof axeCore
  }
}

/** The script itself, evaluated through the DevTools protocol: the panel's Content-Security-Policy forbids inline scripts. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: ImpactValue | null
  readonly help: string
  /** The offending elements: their selector and a little of their markup. */
  readonly nodes: ReadonlyArray<string>
}

/** Every violation axe-core finds on the page as it is now (WCAG 2.x A and AA rules and axe's best practices). */
export const axeViolations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  if (!(await page.evaluate(() => window.axe !== undefined))) await page.evaluate(AXE_SOURCE)
  const results = await page.evaluate(async () => {
    const axe = window.axe
    if (axe === undefined) throw new Error("axe-core was not injected")
    const answer = await axe.run(document, { resultTypes: ["violations"] })
    return answer.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.html.slice(0, 160)}`)
    }))
  })
  return results
}

/** The violations that block someone: serious or critical (the bar every page must pass). */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<Violation>> =>
  (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical")
