// The dependency rule of DESIGN.md §2, checked on every import of the source tree; exits 1 on any violation.
//   domain/    imports only `effect` and ports/
//   ports/     imports only `effect` and domain/ *types*
//   adapters/  never imports another adapter folder or app/
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, normalize, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

export interface Violation {
  readonly file: string
  readonly specifier: string
  readonly rule: string
}

interface ImportRef {
  readonly specifier: string
  readonly typeOnly: boolean
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^"';]*?)\s*from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g

/** Every module specifier a file names, with whether the import can only bring types. */
export const importsOf = (source: string): ReadonlyArray<ImportRef> => {
  const refs: Array<ImportRef> = []
  for (const m of source.matchAll(IMPORT)) {
    if (m[4] !== undefined) {
      const clause = m[3] ?? ""
      // `import { type A, type B } from` brings only types too.
      const inlineTypesOnly = /^\{[^}]*\}$/.test(clause) &&
        clause.slice(1, -1).split(",").map((s) => s.trim()).filter((s) => s !== "").every((s) => s.startsWith("type "))
      refs.push({ specifier: m[4], typeOnly: m[2] !== undefined || inlineTypesOnly })
    } else {
      const specifier = m[5] ?? m[6]
      if (specifier !== undefined) refs.push({ specifier, typeOnly: false })
    }
  }
  return refs
}

const isEffect = (s: string) => s === "effect" || s.startsWith("effect/")

/** The top folders of a path relative to the project root: ["adapters", "http", "Api.ts"]. */
const parts = (path: string) => normalize(path).split(sep)

export const checkFile = (file: string, source: string): ReadonlyArray<Violation> => {
  const [area, tech] = parts(file)
  const violations: Array<Violation> = []
  for (const { specifier, typeOnly } of importsOf(source)) {
    const local = specifier.startsWith(".")
    const target = local ? parts(join(dirname(file), specifier)) : undefined
    const bad = (rule: string) => violations.push({ file, specifier, rule })
    switch (area) {
      case "domain":
        if (!(isEffect(specifier) || (target !== undefined && (target[0] === "domain" || target[0] === "ports")))) {
          bad("domain/ imports only effect and ports/")
        }
        break
      case "ports":
        if (isEffect(specifier) || target?.[0] === "ports") break
        if (target?.[0] === "domain") {
          if (!typeOnly) bad("ports/ imports only types from domain/ (use `import type`)")
          break
        }
        bad("ports/ imports only effect and domain/ types")
        break
      case "adapters":
        if (target?.[0] === "app") bad("adapters never import app/")
        else if (target?.[0] === "adapters" && target[1] !== tech) bad("adapters never import another adapter")
        break
    }
  }
  return violations
}

const sourcesUnder = (root: string, folder: string): Array<string> => {
  const out: Array<string> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.(ts|tsx|js|mjs)$/.test(name)) out.push(relative(root, path))
    }
  }
  walk(join(root, folder))
  return out
}

export const checkTree = (root: string): ReadonlyArray<Violation> =>
  ["domain", "ports", "adapters"].flatMap((folder) =>
    sourcesUnder(root, folder).flatMap((file) => checkFile(file, readFileSync(join(root, file), "utf8")))
  )

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..")
  const violations = checkTree(root)
  for (const v of violations) process.stderr.write(`${v.file}: imports "${v.specifier}" — ${v.rule}\n`)
  process.stdout.write(violations.length === 0 ? "dependency rule: ok\n" : `dependency rule: ${violations.length} violation(s)\n`)
  process.exitCode = violations.length === 0 ? 0 : 1
}
