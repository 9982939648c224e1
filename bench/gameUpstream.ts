// The bench's own Pterodactyl: the sandbox panel and Wings started in this process, registered in the server's
// catalog as a real panel (so the server starts no sandbox panel of its own) with one game plan, and the two calls
// the bench makes to it itself for the direct paths: a console token and a signed download URL (Client API).
import { Effect, Exit, Schema, Scope } from "effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type SandboxPterodactyl, sandboxPterodactyl } from "../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { type Cleanup, progress } from "./system.ts"

export const PANEL = "bench-panel"
export const GAME_PLAN = "bench-game"

/** The catalog entries (API.md "Catalog file") that register the sandbox as panel `bench-panel` with one plan. */
const catalogEntries = (panel: SandboxPterodactyl) => ({
  pterodactyl: [{ name: PANEL, url: panel.url, applicationKey: panel.applicationKey, clientKey: panel.clientKey }],
  plans: [{
    kind: "game",
    id: GAME_PLAN,
    name: "Bench game server",
    priceCents: 600,
    panel: PANEL,
    eggId: 5,
    dockerImage: "ghcr.io/pterodactyl/yolks:java_17",
    memoryMiB: 1024,
    diskMiB: 10240,
    cpuPercent: 200,
    io: 500,
    databases: 0,
    backups: 0,
    allocations: 1,
    environment: { SERVER_JARFILE: "server.jar" },
    userVariables: []
  }]
})

/**
 * A module preloaded by the server (`--import`, after the VPS part's own when both run): it appends these entries
 * to the catalog file another preload already named in CATALOG_FILE, or stands alone, and points CATALOG_FILE at
 * the result — so the server applies one catalog holding both the bench cluster and the bench panel.
 */
const mergingPreload = (entriesPath: string, mergedPath: string) => `import { readFileSync, writeFileSync } from "node:fs"
const own = JSON.parse(readFileSync(${JSON.stringify(entriesPath)}, "utf8"))
const previous = process.env["CATALOG_FILE"]
const base = previous === undefined || previous === "" ? {} : JSON.parse(readFileSync(previous, "utf8"))
const merged = { ...base, pterodactyl: [...(base.pterodactyl ?? []), ...own.pterodactyl], plans: [...(base.plans ?? []), ...own.plans] }
writeFileSync(${JSON.stringify(mergedPath)}, JSON.stringify(merged), { mode: 0o600 })
process.env["CATALOG_FILE"] = ${JSON.stringify(mergedPath)}
`

export interface BenchPanel {
  readonly sandbox: SandboxPterodactyl
  /** NODE_OPTIONS for the server: preloads the module that adds the panel to CATALOG_FILE. */
  readonly serverNodeOptions: string
}

/**
 * Starts the sandbox Pterodactyl (installs take 200 ms: the bench measures the console and the files, not
 * provisioning) and writes the catalog entries; the keys only ever sit in a private temporary directory.
 */
export const startBenchPanel = async (cleanup: Cleanup): Promise<BenchPanel> => {
  // The sandbox is a scoped resource: it lives in a scope of its own, closed by the cleanup.
  const scope = Scope.makeUnsafe()
  cleanup.add("stop the bench's sandbox Pterodactyl", async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    progress("sandbox Pterodactyl stopped")
  })
  const sandbox = await Effect.runPromise(Scope.provide(sandboxPterodactyl({ installDurationMs: 200 }), scope))
  const dir = await mkdtemp(join(tmpdir(), "zh-bench-game-"))
  cleanup.add("remove game catalog dir", () => rm(dir, { recursive: true, force: true }))
  const entriesPath = join(dir, "panel-entries.json")
  await writeFile(entriesPath, JSON.stringify(catalogEntries(sandbox), null, 2), { mode: 0o600 })
  const preload = join(dir, "catalog-panel.mjs")
  await writeFile(preload, mergingPreload(entriesPath, join(dir, "catalog.json")))
  return { sandbox, serverNodeOptions: `--import=${preload}` }
}

/** `{data:{token, socket}}`: the panel's answer (§3.1), and the same shape from our own route (API.md). */
export const decodeConsoleGrant = Schema.decodeUnknownSync(Schema.Struct({ data: Schema.Struct({ token: Schema.String, socket: Schema.String }) }))
const decodeSignedUrl = Schema.decodeUnknownSync(Schema.Struct({
  object: Schema.Literal("signed_url"),
  attributes: Schema.Struct({ url: Schema.String })
}))

/** A Client API GET with the panel's client key (reference/pterodactyl.md §1: JSON `Accept`, or a 302 to login). */
const clientGet = async (panel: SandboxPterodactyl, path: string, what: string): Promise<unknown> => {
  const response = await fetch(`${panel.url}/api/client/servers/${path}`, {
    headers: { authorization: `Bearer ${panel.clientKey}`, accept: "application/json" },
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 200)}`)
  return JSON.parse(text)
}

/** The console token and Wings socket URL of a server, as the panel gives them (§3.1). */
export const wingsGrant = async (panel: SandboxPterodactyl, uuid: string) =>
  decodeConsoleGrant(await clientGet(panel, `${uuid}/websocket`, "the panel's GET /websocket")).data

/** A single-use signed URL on the node for one file (§4, `GET /files/download`). */
export const signedDownloadUrl = async (panel: SandboxPterodactyl, uuid: string, file: string) =>
  decodeSignedUrl(await clientGet(panel, `${uuid}/files/download?file=${encodeURIComponent(file)}`, "the panel's GET /files/download"))
    .attributes.url
