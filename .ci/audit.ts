// `npm audit --omit=dev --audit-level=high` for CI: prints what npm reported, fails on a reported high or critical
// advisory, and when the registry's advisory endpoint cannot be reached says so without failing (no report is not
// a bad report). Anything else npm answers (no lockfile, a crash, an unreadable answer) fails: it is not a report.
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Option, Schema } from "effect"

export const AUDIT_ARGS = ["audit", "--omit=dev", "--audit-level=high", "--json", "--fetch-retries=2", "--fetch-timeout=60000"]

const Counts = Schema.Struct({
  info: Schema.Number,
  low: Schema.Number,
  moderate: Schema.Number,
  high: Schema.Number,
  critical: Schema.Number,
  total: Schema.Number
})

const Advisory = Schema.Struct({
  title: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  severity: Schema.optional(Schema.String)
})

/** npm's audit report (auditReportVersion 2, npm 7 and later): only what is printed or decided on. */
const Report = Schema.Struct({
  auditReportVersion: Schema.Number,
  vulnerabilities: Schema.Record(
    Schema.String,
    Schema.Struct({
      name: Schema.String,
      severity: Schema.String,
      range: Schema.optional(Schema.String),
      // A string names the dependency the advisory comes through; an object is the advisory itself.
      via: Schema.Array(Schema.Union([Schema.String, Advisory]))
    })
  ),
  metadata: Schema.Struct({ vulnerabilities: Counts })
})

/** What npm prints with --json when the audit could not run: `message` (a failed request) or `error` says why. */
const Failure = Schema.Struct({
  message: Schema.optional(Schema.String),
  error: Schema.optional(Schema.Struct({ code: Schema.optional(Schema.String), summary: Schema.optional(Schema.String) }))
})

export type Verdict =
  | { readonly kind: "report"; readonly lines: ReadonlyArray<string>; readonly highOrCritical: number }
  | { readonly kind: "unreachable"; readonly reason: string }
  | { readonly kind: "unreadable"; readonly reason: string }

/** The advisory endpoints (bulk, and the older quick audit npm falls back to). */
const ADVISORY_ENDPOINT = /\/-\/npm\/v1\/security\//

const firstLine = (text: string) => text.split("\n").find((line) => line.trim() !== "")?.trim() ?? ""

/** Reads npm audit's answer: its JSON on stdout, its complaints on stderr, and whether it ran out of time. */
export const classifyAudit = (stdout: string, stderr: string, timedOut = false): Verdict => {
  if (timedOut) return { kind: "unreachable", reason: "npm audit did not finish in time (the advisory endpoint does not answer)" }
  const report = Schema.decodeUnknownOption(Schema.fromJsonString(Report))(stdout)
  if (Option.isSome(report)) {
    const { metadata, vulnerabilities } = report.value
    const counts = metadata.vulnerabilities
    const lines = Object.values(vulnerabilities)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((v) => {
        const advisories = v.via.flatMap((via) => (typeof via === "string" ? [`via ${via}`] : [`${via.title ?? "advisory"}${via.url === undefined ? "" : ` ${via.url}`}`]))
        return `  ${v.severity.padEnd(8)} ${v.name}${v.range === undefined || v.range === "" ? "" : ` ${v.range}`}: ${advisories.join("; ")}`
      })
    const summary = `npm audit (production dependencies): ${counts.total} vulnerable package(s) — ` +
      `critical ${counts.critical}, high ${counts.high}, moderate ${counts.moderate}, low ${counts.low}, info ${counts.info}`
    return { kind: "report", lines: [summary, ...lines], highOrCritical: counts.high + counts.critical }
  }
  const failure = Schema.decodeUnknownOption(Schema.fromJsonString(Failure))(stdout)
  const message = Option.match(failure, {
    onNone: () => "",
    onSome: (f) => f.message ?? [f.error?.code, f.error?.summary].filter((part) => part !== undefined && part !== "").join(": ")
  })
  if (ADVISORY_ENDPOINT.test(message) || /audit endpoint returned an error/.test(stderr)) {
    return { kind: "unreachable", reason: message !== "" ? message : firstLine(stderr) }
  }
  return { kind: "unreadable", reason: message !== "" ? message : firstLine(stderr) || firstLine(stdout) || "no output" }
}

/** The lines to print and the exit code of the CI step. */
export const verdictOutput = (verdict: Verdict): { readonly lines: ReadonlyArray<string>; readonly exitCode: 0 | 1 } => {
  switch (verdict.kind) {
    case "report":
      return verdict.highOrCritical > 0
        ? { lines: [...verdict.lines, `npm audit: ${verdict.highOrCritical} high or critical advisory(ies) in production dependencies`], exitCode: 1 }
        : { lines: [...verdict.lines, "npm audit: no high or critical advisory in production dependencies"], exitCode: 0 }
    case "unreachable":
      return {
        lines: [`npm audit: the registry's advisory endpoint could not be reached (${verdict.reason}); no report, not counted as a failure`],
        exitCode: 0
      }
    case "unreadable":
      return { lines: [`npm audit did not produce a report: ${verdict.reason}`], exitCode: 1 }
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = spawnSync("npm", AUDIT_ARGS, {
    cwd: join(dirname(fileURLToPath(import.meta.url)), ".."),
    encoding: "utf8",
    timeout: 10 * 60_000,
    maxBuffer: 64 * 1024 * 1024
  })
  const timedOut = result.error !== undefined && "code" in result.error && result.error.code === "ETIMEDOUT"
  if (result.stderr !== "") process.stderr.write(result.stderr)
  const { exitCode, lines } = verdictOutput(classifyAudit(result.stdout ?? "", result.stderr ?? "", timedOut))
  for (const line of lines) process.stdout.write(`${line}\n`)
  process.exitCode = exitCode
}
