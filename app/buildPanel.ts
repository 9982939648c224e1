// Builds the user panel (app/web, Vite) into app/web/dist when it is missing or older than its sources.
// `npm start` runs it before the server, so `npm install && npm start` still does everything; `npm run build:web`
// forces a build. "Older" is by content: a hash of the sources, index.html, public/, the Vite config and the
// front-end dependencies' versions is stamped into dist/.build-hash and compared on the next start.
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..")
export const PANEL_SOURCE = join(ROOT, "app", "web")
/** Where the server finds the built panel (HttpAppLive's webRoot). */
export const PANEL_DIST = join(PANEL_SOURCE, "dist")
const STAMP = ".build-hash"
/** The packages whose code ends up in the bundle or makes it. */
const FRONT_END_PACKAGES = ["vite", "@xterm/xterm", "@xterm/addon-fit"]

const filesUnder = (dir: string): Array<string> => {
  if (!existsSync(dir)) return []
  const out: Array<string> = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...filesUnder(path))
    else out.push(path)
  }
  return out
}

/** The content hash of everything the build reads. */
export const sourceHash = (source = PANEL_SOURCE): string => {
  const hash = createHash("sha256")
  const files = [
    ...filesUnder(join(source, "src")),
    ...filesUnder(join(source, "public")),
    join(source, "index.html"),
    join(source, "vite.config.ts")
  ].filter((f) => existsSync(f)).sort()
  for (const file of files) {
    hash.update(relative(source, file).split(sep).join("/")).update("\0").update(readFileSync(file)).update("\0")
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>
    devDependencies?: Record<string, string>
  }
  for (const name of FRONT_END_PACKAGES) {
    hash.update(`${name}@${pkg.dependencies?.[name] ?? pkg.devDependencies?.[name] ?? ""}\0`)
  }
  return hash.digest("hex")
}

/** The hash the current dist was built from, if it is whole (index.html present). */
const builtHash = (dist: string): string | undefined => {
  if (!existsSync(join(dist, "index.html"))) return undefined
  try {
    return readFileSync(join(dist, STAMP), "utf8").trim()
  } catch {
    return undefined
  }
}

export const isPanelCurrent = (source = PANEL_SOURCE, dist = PANEL_DIST): boolean => builtHash(dist) === sourceHash(source)

/**
 * Builds into a fresh folder beside dist and swaps it in, so a running server never serves a half-written build.
 * Returns whether it built.
 */
export const buildPanel = async (options: { readonly force?: boolean; readonly quiet?: boolean } = {}): Promise<boolean> => {
  const hash = sourceHash()
  if (!options.force && builtHash(PANEL_DIST) === hash) return false
  const { build } = await import("vite")
  const staging = join(PANEL_SOURCE, `.dist-${process.pid}`)
  rmSync(staging, { recursive: true, force: true })
  try {
    await build({
      configFile: join(PANEL_SOURCE, "vite.config.ts"),
      logLevel: options.quiet ? "warn" : "info",
      build: { outDir: staging, emptyOutDir: true }
    })
    writeFileSync(join(staging, STAMP), `${hash}\n`)
    rmSync(PANEL_DIST, { recursive: true, force: true })
    try {
      renameSync(staging, PANEL_DIST)
    } catch (e) {
      // Another `npm start` swapped in the same build meanwhile: that one serves.
      if (builtHash(PANEL_DIST) !== hash) throw e
    }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  return true
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const force = process.argv.includes("--force")
  try {
    const built = await buildPanel({ force, quiet: !force })
    process.stdout.write(built ? "panel: built into app/web/dist\n" : "panel: up to date\n")
  } catch (e) {
    process.stderr.write(`panel: the build failed: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exitCode = 1
  }
}
