// The printed table and the JSON file of a bench run.
import { mkdir, writeFile } from "node:fs/promises"
import { dirname } from "node:path"

/** INVALID: the phase had failed requests, so its figure does not measure what it claims to. */
export type Verdict = "PASS" | "MISS" | "INVALID"

export interface Line {
  readonly label: string
  readonly value: string
  readonly target?: string
  readonly verdict?: Verdict
}

export interface Section {
  readonly title: string
  readonly lines: ReadonlyArray<Line>
  readonly notes?: ReadonlyArray<string>
}

export const judge = (meets: boolean, valid: boolean): Verdict => (!valid ? "INVALID" : meets ? "PASS" : "MISS")

export const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
export const percent = (ratio: number) => `${fixed(ratio * 100)} %`
export const times = (ratio: number) => `${fixed(ratio, 2)} ×`
export const rps = (n: number) => `${fixed(n, n < 100 ? 1 : 0)} req/s`
export const ms = (n: number) => `${fixed(n, n < 10 ? 2 : 1)} ms`
export const mib = (n: number) => `${fixed(n)} MiB`

const pad = (s: string, width: number) => s + " ".repeat(Math.max(0, width - s.length))

export const renderTable = (heading: ReadonlyArray<string>, sections: ReadonlyArray<Section>): string => {
  const all = sections.flatMap((s) => s.lines)
  const w = {
    label: Math.max(...all.map((l) => l.label.length)),
    value: Math.max(...all.map((l) => l.value.length)),
    target: Math.max(6, ...all.map((l) => (l.target ?? "").length))
  }
  const width = w.label + w.value + w.target + 16
  const rule = "─".repeat(width)
  const out: Array<string> = [rule, ...heading, rule]
  out.push(`  ${pad("", w.label)}  ${pad("value", w.value)}  ${pad("target", w.target)}  result`)
  for (const section of sections) {
    out.push(section.title)
    for (const line of section.lines) {
      out.push(`  ${pad(line.label, w.label)}  ${pad(line.value, w.value)}  ${pad(line.target ?? "", w.target)}  ${line.verdict ?? ""}`.trimEnd())
    }
    for (const note of section.notes ?? []) out.push(`    · ${note}`)
  }
  out.push(rule)
  return out.join("\n") + "\n"
}

export const writeJson = async (path: string, data: unknown) => {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, JSON.stringify(data, null, 2) + "\n")
}
