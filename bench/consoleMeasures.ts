// (f) The console relay against a direct console to the same VM: output throughput and keystroke round trips.
// The sandbox's guest has no bulk-output command, so output is made by `echo`: each typed line comes back twice
// (the terminal's echo of the keys, then the command's output), and a run pipelines many such lines at once.
import { randomBytes } from "node:crypto"
import { performance } from "node:perf_hooks"
import { openDirect, openRelay, percentile, type Path, type Terminal } from "./consoleSocket.ts"
import { progress } from "./system.ts"

const PROMPT = ":~# "
const WARM_UP_KEYS = 50

export interface ConsoleTarget {
  readonly serverUrl: string
  /** The server's PUBLIC_URL: the only Origin its console accepts. */
  readonly origin: string
  readonly cookie: string
  readonly vpsId: string
  readonly rootPassword: string
  readonly pveUrl: string
  readonly login: { readonly username: string; readonly password: string }
  readonly vm: { readonly node: string; readonly vmid: number }
}

export interface Run {
  /** Terminal output received, in bytes. */
  readonly bytes: number
  readonly ms: number
  readonly mibPerSecond: number
  readonly commands: number
}

/**
 * Types `commands` lines of `echo <payload>` in one burst (one frame each) and waits for the output of a last
 * marker command: the time from the first frame sent to that output, over all the output bytes received.
 */
const echoBurst = async (t: Terminal, commands: number, payloadBytes: number): Promise<Run> => {
  const payload = randomBytes(Math.ceil((payloadBytes * 3) / 4)).toString("base64url").slice(0, payloadBytes)
  // `.` is not in base64url: the marker's output cannot be mistaken for a payload.
  const marker = `END.${randomBytes(6).toString("hex")}`
  const line = Buffer.from(`echo ${payload}\r`, "latin1")
  const before = t.received
  const started = performance.now()
  for (let i = 0; i < commands; i++) t.type(line)
  t.type(`echo ${marker}\r`)
  await t.until(`\r\n${marker}\r\n`, 120_000)
  const ms = performance.now() - started
  const bytes = t.received - before
  await t.until(PROMPT)
  return { bytes, ms, mibPerSecond: bytes / 2 ** 20 / (ms / 1000), commands: commands + 1 }
}

/** One character typed, timed until its echo; a backspace (not timed) keeps the line empty. */
const keystrokes = async (t: Terminal, rounds: number): Promise<Array<number>> => {
  const samples: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    const key = String.fromCharCode(97 + (i % 26))
    const started = performance.now()
    t.type(key)
    await t.until(key)
    samples.push(performance.now() - started)
    t.type("\x7f")
    await t.until("\b \b")
  }
  return samples
}

interface Session {
  readonly path: Path
  readonly bulk: Run
  readonly small: Run
  readonly keys: ReadonlyArray<number>
  readonly extensions: string
}

/** The shell prompt, logging in first if the getty still asks (the tty outlives console connections). */
const toShell = async (t: Terminal, rootPassword: string, loggedIn: boolean) => {
  t.type("\r")
  if (loggedIn) return t.until(PROMPT)
  await t.until("login: ")
  t.type("root\r")
  await t.until("Password: ")
  t.type(`${rootPassword}\r`)
  await t.until(PROMPT)
}

const SHAPES = {
  /** 256 lines of 16 KiB (the relay takes input frames up to 64 KiB): about 8 MiB of output in large frames. */
  bulk: { commands: 256, payloadBytes: 16 * 1024 },
  /** 8,000 lines of 48 bytes: about 1 MiB of output in 130-byte frames, as an interactive session makes them. */
  small: { commands: 8_000, payloadBytes: 48 }
}

const session = async (target: ConsoleTarget, path: Path, keys: number, loggedIn: boolean): Promise<Session> => {
  const t = path === "relay"
    ? await openRelay(target.serverUrl, target.origin, target.cookie, target.vpsId)
    : await openDirect(target.pveUrl, target.login, target.vm)
  try {
    await toShell(t, target.rootPassword, loggedIn)
    await keystrokes(t, WARM_UP_KEYS)
    await echoBurst(t, 8, SHAPES.bulk.payloadBytes)
    const samples = await keystrokes(t, keys)
    const bulk = await echoBurst(t, SHAPES.bulk.commands, SHAPES.bulk.payloadBytes)
    const small = await echoBurst(t, SHAPES.small.commands, SHAPES.small.payloadBytes)
    return { path, bulk, small, keys: samples, extensions: t.extensions === "" ? "none" : t.extensions }
  } finally {
    await t.close()
  }
}

const summary = (sessions: ReadonlyArray<Session>, path: Path) => {
  const mine = sessions.filter((s) => s.path === path)
  const keys = mine.flatMap((s) => s.keys).sort((a, b) => a - b)
  const best = (pick: (s: Session) => Run) => mine.map(pick).reduce((a, b) => (b.mibPerSecond > a.mibPerSecond ? b : a))
  return {
    bulk: best((s) => s.bulk),
    small: best((s) => s.small),
    runs: mine.map((s) => ({ bulkMiBps: s.bulk.mibPerSecond, smallMiBps: s.small.mibPerSecond })),
    keys: {
      samples: keys.length,
      p50Ms: percentile(keys, 0.5),
      p90Ms: percentile(keys, 0.9),
      p99Ms: percentile(keys, 0.99),
      maxMs: keys.at(-1) ?? Number.NaN
    },
    extensions: mine[0]?.extensions ?? "n/a"
  }
}

/**
 * Alternates relay and direct sessions (`rounds` each, one console open at a time: the sandbox copies a VM's
 * output to every console attached to it), so drift on a shared machine touches both paths alike. Throughput is
 * each path's best run; keystroke percentiles pool every round's samples.
 */
export const relayVersusDirect = async (target: ConsoleTarget, rounds: number, keysPerRound: number) => {
  const sessions: Array<Session> = []
  for (let round = 0; round < rounds; round++) {
    for (const path of ["relay", "direct"] as const) {
      progress(`    console round ${round + 1}/${rounds}: ${path}`)
      sessions.push(await session(target, path, keysPerRound, sessions.length > 0))
    }
  }
  const relay = summary(sessions, "relay")
  const direct = summary(sessions, "direct")
  return {
    shapes: SHAPES,
    rounds,
    relay,
    direct,
    bulkRatio: relay.bulk.mibPerSecond / direct.bulk.mibPerSecond,
    smallRatio: relay.small.mibPerSecond / direct.small.mibPerSecond,
    addedP99Ms: relay.keys.p99Ms - direct.keys.p99Ms,
    addedP50Ms: relay.keys.p50Ms - direct.keys.p50Ms
  }
}
