// The system under test: a fresh Postgres database, migrated by the admin CLI, and one server process on it.
// Everything acquired here registers its own release in a Cleanup, so a failed or interrupted run leaves nothing.
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "..")

export const progress = (line: string) => {
  process.stderr.write(`[bench] ${line}\n`)
}

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  new Promise<A>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms)
    promise.then(
      (a) => {
        clearTimeout(timer)
        resolvePromise(a)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e instanceof Error ? e : new Error(String(e)))
      }
    )
  })

/** Releases in reverse order of acquisition; each step is bounded and a failing step does not stop the others. */
export class Cleanup {
  private readonly steps: Array<readonly [string, () => Promise<void>]> = []
  private running: Promise<void> | undefined

  add(name: string, release: () => Promise<void>) {
    this.steps.push([name, release])
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const [name, release] of this.steps.splice(0).reverse()) {
        try {
          await withTimeout(release(), 30_000, name)
        } catch (e) {
          progress(`cleanup "${name}" failed: ${e instanceof Error ? e.message : String(e)}`)
        }
      }
    })()
    return this.running
  }
}

/** Runs a program to completion; rejects with its output on a non-zero exit or after `timeoutMs`. */
export const runProgram = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs: number }
): Promise<string> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8")
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs)
    child.once("error", (e) => {
      clearTimeout(timer)
      reject(new Error(`${command}: ${e.message}`))
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolvePromise(output.trim())
      else reject(new Error(`${command} ${args[0] ?? ""} exited with ${code ?? signal}: ${output.trim()}`))
    })
  })

export const psql = (url: string, sql: string) =>
  runProgram("psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], { timeoutMs: 60_000 })

export const postgresVersion = (adminUrl: string) => psql(adminUrl, "SHOW server_version")

/** A new, empty database; dropped (disconnecting whoever is still on it) at cleanup. Returns its URL. */
export const createDatabase = async (adminUrl: string, cleanup: Cleanup): Promise<{ name: string; url: string }> => {
  const name = `zh_bench_${Date.now()}`
  await psql(adminUrl, `CREATE DATABASE "${name}"`)
  cleanup.add(`drop database ${name}`, async () => {
    await psql(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    progress(`dropped database ${name}`)
  })
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { name, url: url.href }
}

const freePort = (): Promise<number> =>
  new Promise((resolvePromise, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => (port > 0 ? resolvePromise(port) : reject(new Error("no free port"))))
    })
  })

export interface ServerSettings {
  readonly databaseUrl: string
  readonly bcryptCost: number
  /** Passed to the server as NODE_OPTIONS (e.g. `--cpu-prof` to see where its time goes). */
  readonly nodeOptions: string | undefined
  /** Settings added to (or replacing) the production start's. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Run after the migration, before the server starts, on the same settings (e.g. `secrets put`). */
  readonly beforeStart?: ((env: NodeJS.ProcessEnv) => Promise<void>) | undefined
}

/**
 * The settings of a production start, from a clean environment (nothing of the caller's shell leaks in).
 * The sign-in throttles are raised to their maximum: the bench signs in from one address, and 20 concurrent correct
 * sign-ins to one account count as 20 in-flight attempts before the first success takes its own back.
 */
const serverEnv = (settings: ServerSettings, port: number, dataDir: string): NodeJS.ProcessEnv => ({
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  HOME: process.env["HOME"] ?? dataDir,
  NODE_ENV: "production",
  // Orders are paid on the sandbox Stripe (the server runs it on PORT + 1); the upstreams are the bench's own, from
  // CATALOG_FILE, so no sandbox Proxmox or panel starts.
  SANDBOX: "true",
  HOST: "127.0.0.1",
  PORT: String(port),
  PUBLIC_URL: `http://localhost:${port}`,
  DATABASE_URL: settings.databaseUrl,
  DATA_DIR: dataDir,
  JWT_SECRET: randomBytes(36).toString("base64url"), // 48 characters
  ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  BCRYPT_COST: String(settings.bcryptCost),
  LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS: "1000", // the setting's maximum
  LOGIN_MAX_FAILURES_PER_ADDRESS: "100000", // the setting's maximum
  LOGIN_MAX_FAILURES_PER_ACCOUNT: "100000", // the setting's maximum
  // Likewise the per-customer limits: the bench measures the relays' cost, and bursts thousands of console frames
  // and relayed calls from one customer in a second.
  CONSOLE_INPUT_RATE_SCALE: "10000", // the setting's maximum
  CUSTOMER_UPSTREAM_RATE_PER_MINUTE: "100000", // the setting's maximum
  LOG_LEVEL: "Warn",
  ...(settings.nodeOptions === undefined ? {} : { NODE_OPTIONS: settings.nodeOptions }),
  ...settings.env
})

export interface RunningServer {
  readonly url: string
  readonly pid: number
  /** The last lines the server wrote (stdout and stderr). */
  readonly output: () => string
}

const waitForExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(true)
    : new Promise((resolvePromise) => {
      const timer = setTimeout(() => resolvePromise(false), ms)
      child.once("exit", () => {
        clearTimeout(timer)
        resolvePromise(true)
      })
    })

const ready = async (url: string, child: ChildProcess, output: () => string) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output()}`)
    }
    const answered = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0)
    if (answered === 200) return
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`the server was not ready within 60 s:\n${output()}`)
}

/** Migrates the database with the admin CLI, then starts `node app/main.ts` on it and waits for /readyz. */
export const startServer = async (settings: ServerSettings, cleanup: Cleanup): Promise<RunningServer> => {
  const dataDir = await mkdtemp(join(tmpdir(), "zh-bench-"))
  cleanup.add("remove data dir", () => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const env = serverEnv(settings, port, dataDir)
  const { NODE_OPTIONS: _profilingIsForTheServerOnly, ...migrateEnv } = env
  progress(await runProgram(process.execPath, ["app/cli.ts", "migrate"], { env: migrateEnv, timeoutMs: 120_000 }))
  if (settings.beforeStart !== undefined) await settings.beforeStart(migrateEnv)

  const child = spawn(process.execPath, ["app/main.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
  let tail = ""
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-16_000)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  cleanup.add("stop server", async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    if (!(await waitForExit(child, 15_000))) {
      child.kill("SIGKILL")
      await waitForExit(child, 5_000)
    }
    progress(`server stopped (${child.exitCode ?? child.signalCode})`)
  })
  const pid = child.pid
  if (pid === undefined) throw new Error("the server process did not start")
  const url = `http://127.0.0.1:${port}`
  await ready(url, child, () => tail)
  return { url, pid, output: () => tail }
}

export interface Memory {
  /** Resident set size now, in MiB. */
  readonly rssMiB: number
  /** Peak resident set size since the process started, in MiB. */
  readonly hwmMiB: number
}

const kibField = (status: string, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)
  if (match?.[1] === undefined) throw new Error(`/proc status has no ${field}`)
  return Number(match[1]) / 1024
}

export const memoryOf = async (pid: number): Promise<Memory> => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  return { rssMiB: kibField(status, "VmRSS"), hwmMiB: kibField(status, "VmHWM") }
}

