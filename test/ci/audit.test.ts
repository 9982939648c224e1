// The CI's audit step reads npm's answer right: a report fails only on high or critical advisories, an advisory
// endpoint that cannot be reached is said and passes, anything else (no lockfile, garbage) fails.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { AUDIT_ARGS, classifyAudit, verdictOutput } from "../../.ci/audit.ts"

const canned = (name: string) => {
  const dir = join(import.meta.dirname, "..", "fixtures", "npm-audit")
  return [readFileSync(join(dir, `${name}.stdout.json`), "utf8"), readFileSync(join(dir, `${name}.stderr.txt`), "utf8")] as const
}

const outcome = (name: string) => verdictOutput(classifyAudit(...canned(name)))

describe("the npm audit step", () => {
  it("runs the audit the issue names, on production dependencies, reporting high and above", () => {
    expect(AUDIT_ARGS.slice(0, 3)).toEqual(["audit", "--omit=dev", "--audit-level=high"])
    expect(AUDIT_ARGS).toContain("--json")
  })

  it("passes a clean report and says so", () => {
    const { exitCode, lines } = outcome("clean")
    expect(exitCode).toBe(0)
    expect(lines[0]).toContain("0 vulnerable package(s)")
    expect(lines.at(-1)).toContain("no high or critical advisory")
  })

  it("passes a report with only a moderate advisory, printing it", () => {
    const { exitCode, lines } = outcome("moderate")
    expect(exitCode).toBe(0)
    expect(lines.join("\n")).toMatch(/moderate\s+jose 6\.2\.17: jose resource exhaustion https:\/\/github\.com\/advisories\//)
  })

  it("fails on a reported high advisory, naming the package and the advisory", () => {
    const { exitCode, lines } = outcome("high")
    expect(exitCode).toBe(1)
    expect(lines.join("\n")).toContain("high     ws 8.23.0: ws affected by a DoS")
    expect(lines.at(-1)).toContain("1 high or critical")
  })

  it("fails on a critical one too", () => {
    const [stdout] = canned("high")
    const critical = stdout.replace(/"high": 1,\n(\s+)"critical": 0/, "\"high\": 0,\n$1\"critical\": 1")
    expect(critical).not.toBe(stdout)
    expect(verdictOutput(classifyAudit(critical, "")).exitCode).toBe(1)
  })

  for (const name of ["http-405", "http-500", "econnrefused", "enotfound"]) {
    it(`does not fail when the advisory endpoint cannot be reached (${name}), and says so`, () => {
      const verdict = classifyAudit(...canned(name))
      expect(verdict.kind).toBe("unreachable")
      const { exitCode, lines } = verdictOutput(verdict)
      expect(exitCode).toBe(0)
      expect(lines.join("\n")).toMatch(/advisory endpoint could not be reached \(.*security\/advisories\/bulk/)
    })
  }

  it("does not fail when npm audit never finishes (the endpoint hangs)", () => {
    expect(verdictOutput(classifyAudit("", "", true)).exitCode).toBe(0)
  })

  it("fails when npm produced no report for another reason: no lockfile, or an answer it cannot read", () => {
    const enolock = verdictOutput(classifyAudit(...canned("enolock")))
    expect(enolock.exitCode).toBe(1)
    expect(enolock.lines.join("\n")).toContain("ENOLOCK: This command requires an existing lockfile.")
    expect(verdictOutput(classifyAudit("npm ERR! something broke", "")).exitCode).toBe(1)
    expect(verdictOutput(classifyAudit("", "")).exitCode).toBe(1)
  })
})
