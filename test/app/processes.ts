// Real child processes of the app (`node app/main.ts`, `node app/cli.ts`) for tests about process behaviour:
// a clean environment, bounded waits, and a registry so every child is killed and every temp dir removed.
import { randomBytes, randomInt } from "node:crypto"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { postgres } from "../../app/Database.ts"
import { pgliteTemplateFile } from "../support/databases.ts"

export const repoRoot = resolve(import.meta.dirname, "../..")

export type Env = Record<string, string>

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Child {
  readonly process: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<Exit>
}

const children = new Set<Child>()
const dirs = new Set<string>()

/**
 * Only what a process needs to run: no setting of the developer's shell leaks into a test (vitest sets NODE_ENV).
 * Node's compile cache, shared by every child: each one starts without compiling the application's modules again
 * (half a second or more of a start, and the tests start dozens).
 */
const baseEnv = (): Env => {
  const env: Env = { NODE_COMPILE_CACHE: join(tmpdir(), "zh-test-node-compile-cache") }
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "SYSTEMROOT"]) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

/** `node <script> ...args` from the repository root; `input` is written to stdin, which is then closed. */
export const spawnNode = (script: string, args: ReadonlyArray<string>, env: Env, input?: string): Child => {
  const proc = spawn(process.execPath, [script, ...args], {
    cwd: repoRoot,
    env: { ...baseEnv(), ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  proc.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
  proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
  proc.stdin.on("error", () => undefined)
  proc.stdin.end(input ?? "")
  const exited = new Promise<Exit>((done) => proc.once("exit", (code, signal) => done({ code, signal })))
  const child: Child = { process: proc, stdout: () => out, stderr: () => err, exited }
  children.add(child)
  void exited.then(() => children.delete(child))
  return child
}

export const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  new Promise<A>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out after ${ms} ms: ${what}`)), ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        done(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        fail(error)
      }
    )
  })

/** The exit of `child` within `ms`; on timeout the child is killed and the test fails with its output. */
export const exitOf = async (child: Child, ms: number): Promise<Exit> => {
  try {
    return await withTimeout(child.exited, ms, `process exit\nstdout: ${child.stdout()}\nstderr: ${child.stderr()}`)
  } catch (error) {
    child.process.kill("SIGKILL")
    throw error
  }
}

/** Runs a command to completion within `ms`. */
export const run = async (script: string, args: ReadonlyArray<string>, env: Env, options: { input?: string; ms?: number } = {}) => {
  const child = spawnNode(script, args, env, options.input)
  const exit = await exitOf(child, options.ms ?? 30_000)
  return { ...exit, stdout: child.stdout(), stderr: child.stderr() }
}

/**
 * A port nobody listens on right now, below the kernel's ephemeral range (32768–60999 on Linux): a port the system
 * hands out on its own (a runner's RUNNER_PORT=0, any client socket) can never take it between this check and the
 * child's bind. Random in 20000–32767, so two test files starting servers at once hardly ever pick the same one.
 */
export const freePort = async (): Promise<number> => {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = randomInt(20_000, 32_768)
    const free = await new Promise<boolean>((done) => {
      const server = createServer()
      server.once("error", () => done(false))
      server.listen(port, "127.0.0.1", () => server.close(() => done(true)))
    })
    if (free) return port
  }
  throw new Error("no free port in 20000–32767 after 50 tries")
}

/** Polls `url` until it answers `status`, the process exits, or `ms` pass. */
const waitForStatus = async (child: Child, url: string, status: number, ms: number) => {
  const deadline = Date.now() + ms
  let exited = false
  void child.exited.then(() => (exited = true))
  while (Date.now() < deadline && !exited) {
    const answered = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => undefined)
    if (answered === status) return
    await new Promise((next) => setTimeout(next, 100))
  }
  throw new Error(`${url} did not answer ${status} (exited: ${exited})\nstdout: ${child.stdout()}\nstderr: ${child.stderr()}`)
}

export interface Server extends Child {
  readonly url: string
}

/**
 * `node app/main.ts` on `env.PORT` or a free port, once /healthz answers 200 (killed if it does not within `ms`). On a
 * port of our choosing, a start that lost the port to another test file's server in the meantime is made again on
 * another one.
 */
export const startServer = async (env: Env, ms = 120_000): Promise<Server> => {
  for (let attempt = 1; ; attempt++) {
    const chosen = env["PORT"] === undefined
    const port = chosen ? await freePort() : Number(env["PORT"])
    const child = spawnNode("app/main.ts", [], { HOST: "127.0.0.1", PORT: String(port), ...env })
    const url = `http://127.0.0.1:${port}`
    try {
      await waitForStatus(child, `${url}/healthz`, 200, ms)
      return { ...child, url }
    } catch (error) {
      child.process.kill("SIGKILL")
      if (chosen && attempt < 3 && child.stderr().includes("EADDRINUSE")) continue
      throw error
    }
  }
}

/** SIGTERM, then the exit within `ms`. */
export const stop = (child: Child, ms = 20_000): Promise<Exit> => {
  child.process.kill("SIGTERM")
  return exitOf(child, ms)
}

export const tempDir = async (label: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), `zh-${label}-`))
  dirs.add(dir)
  return dir
}

/**
 * A DATA_DIR whose embedded database exists already, migrated and empty (the PGlite template unpacked): a server or CLI
 * started on it skips initdb. Tests about a DATA_DIR's very first start use `tempDir`.
 */
export const migratedDataDir = async (label: string): Promise<string> => {
  const dir = await tempDir(label)
  await mkdir(join(dir, "pglite"))
  const template = await pgliteTemplateFile()
  await new Promise<void>((resolve, reject) =>
    execFile("tar", ["-xf", template, "-C", join(dir, "pglite")], (error) => (error === null ? resolve() : reject(error))))
  return dir
}

/** For afterEach/afterAll: kills what is still running (and waits for it), removes temp dirs. */
export const cleanUp = async () => {
  const running = [...children]
  for (const child of running) child.process.kill("SIGKILL")
  await Promise.all(running.map((child) => withTimeout(child.exited, 10_000, "killed child exit").catch(() => undefined)))
  const removing = [...dirs]
  dirs.clear()
  await Promise.all(removing.map((dir) => rm(dir, { recursive: true, force: true })))
}

/** The non-empty lines of a process's output. */
export const lines = (text: string): ReadonlyArray<string> => text.split("\n").filter((line) => line.trim() !== "")

/** A fresh, empty database on the server of `adminUrl` (like test/support/databases.ts `freshPostgres`). */
export const createDatabase = async (adminUrl: string) => {
  const name = `zh_test_${Date.now()}_${randomBytes(4).toString("hex")}`
  const admin = (statement: string) =>
    Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
        Effect.provide(postgres(Redacted.make(adminUrl), 1))
      )
    )
  await admin(`CREATE DATABASE ${name}`)
  return {
    url: adminUrl.replace(/\/[^/?]*(\?.*)?$/, `/${name}$1`),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

/** Reads until `until` holds, every 100 ms, or fails after `ms` with what was read last. */
export const pollUntil = async <A>(read: () => Promise<A>, until: (value: A) => boolean, ms: number, what: string): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (until(value)) return value
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms: ${JSON.stringify(value, null, 1)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
