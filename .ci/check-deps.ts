// The dependency rule of DESIGN.md §2 and §7, checked by dependency-cruiser with the rules of .dependency-cruiser.mjs.
// Violations listed in .dependency-cruiser-known-violations.json (the tree had them when their rule came) are
// tolerated until fixed; any other one, and a listed one that is fixed but still listed, fails (exit 1).
//   node .ci/check-deps.ts                    check the tree (npm run check:deps)
//   node .ci/check-deps.ts --baseline         drop the fixed violations from the known list (never adds one)
//   node .ci/check-deps.ts --baseline=full    list every current violation as known (only when a rule is added)
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from "dependency-cruiser"
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..")
const configFile = join(repoRoot, ".dependency-cruiser.mjs")
export const knownViolationsFile = ".dependency-cruiser-known-violations.json"

/** The source tree the rules are checked on (tests are not part of it). */
export const sourceFolders = ["domain", "ports", "adapters", "app", "bench", ".ci"] as const

export interface DependencyReport {
  /** Violations the known list does not name: each fails the check. */
  readonly violations: ReadonlyArray<IViolation>
  /** Violations the known list names, still in the tree. */
  readonly known: number
  /** Entries of the known list that the tree no longer has: the list must shrink. */
  readonly fixed: number
  readonly modules: number
}

// dependency-cruiser validates the list against its own schema before using it.
const readKnown = (root: string): Array<IViolation> => {
  const file = join(root, knownViolationsFile)
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as Array<IViolation> : []
}

const cruiseTree = async (root: string, extra: ICruiseOptions): Promise<{ output: ICruiseResult | string }> => {
  const options = await extractDepcruiseOptions(configFile)
  return cruise(sourceFolders.filter((folder) => existsSync(join(root, folder))), {
    ...options,
    ...extra,
    baseDir: root
  })
}

/** Checks the tree at `root` against the rules, tolerating the violations that root's list names. */
export const checkTree = async (root: string): Promise<DependencyReport> => {
  const { output } = await cruiseTree(root, { knownViolations: readKnown(root) })
  if (typeof output === "string") throw new Error("dependency-cruiser answered text where a cruise result was asked")
  const { summary } = output
  return {
    violations: summary.violations.filter((v) => v.rule.severity === "error"),
    known: summary.ignore,
    fixed: summary.baselineStale ?? 0,
    modules: summary.totalCruised
  }
}

/** Rewrites root's known list: without the fixed violations ("shrink-only"), or as every current one ("full"). */
export const writeBaseline = async (root: string, mode: "shrink-only" | "full"): Promise<number> => {
  const { output } = await cruiseTree(root, {
    knownViolations: readKnown(root),
    outputType: "baseline",
    baseline: { mode }
  })
  if (typeof output !== "string") throw new Error("dependency-cruiser answered a cruise result where a baseline was asked")
  writeFileSync(join(root, knownViolationsFile), output)
  return (JSON.parse(output) as ReadonlyArray<unknown>).length
}

/** A violation as a reader wants it: the import, or the whole cycle. */
export const describe = (v: IViolation): string =>
  v.cycle !== undefined && v.cycle.length > 0
    ? [v.from, ...v.cycle.map((step) => step.name)].join(" → ")
    : `${v.from} → ${v.to}`

/** The violations grouped by rule, each rule with the reason it exists (its comment in the configuration). */
const explain = async (violations: ReadonlyArray<IViolation>): Promise<string> => {
  const options = await extractDepcruiseOptions(configFile)
  const why = new Map((options.ruleSet?.forbidden ?? []).map((r) => [r.name, r.comment]))
  const byRule = Map.groupBy(violations, (v) => v.rule.name)
  return [...byRule].map(([rule, vs]) =>
    `${rule}${why.get(rule) === undefined ? "" : ` — ${why.get(rule)}`}\n${vs.map((v) => `  ${describe(v)}\n`).join("")}`
  ).join("")
}

const main = async (args: ReadonlyArray<string>) => {
  const baseline = args.find((a) => a === "--baseline" || a.startsWith("--baseline="))
  if (baseline !== undefined) {
    const mode = baseline === "--baseline=full" ? "full" : "shrink-only"
    const count = await writeBaseline(repoRoot, mode)
    process.stdout.write(`dependency rule: ${count} known violation(s) written to ${knownViolationsFile} (${mode})\n`)
    return 0
  }
  const report = await checkTree(repoRoot)
  process.stderr.write(await explain(report.violations))
  if (report.fixed > 0) {
    process.stderr.write(
      `${report.fixed} violation(s) of ${knownViolationsFile} are fixed: drop them with ` +
        "`npm run check:deps -- --baseline` so that they cannot come back unnoticed\n"
    )
  }
  const left = report.known === 0 ? "" : ` (${report.known} known violation(s) left, see ${knownViolationsFile})`
  if (report.violations.length === 0 && report.fixed === 0) {
    process.stdout.write(`dependency rule: ok${left}\n`)
    return 0
  }
  const parts = [
    ...(report.violations.length > 0 ? [`${report.violations.length} violation(s)`] : []),
    ...(report.fixed > 0 ? [`${report.fixed} fixed violation(s) still listed as known`] : [])
  ]
  process.stdout.write(`dependency rule: ${parts.join(", ")}${left}\n`)
  return 1
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2))
}
