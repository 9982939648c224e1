// How much memory oversized console frames cost the server: starts `node app/main.ts` of a checkout (this one, or
// the one named as the first argument) on an embedded database with the sandbox upstreams, orders a VPS, then sends
// ten 32 MiB binary frames to its console, each on its own connection, and reads the server's RSS from /proc before,
// at its peak (sampled every 20 ms) and after. Prints one JSON line.
//   node bench/consoleFrames.ts [checkout root]
import { payCheckout } from "./checkout.ts"
import { type ChildProcess, spawn } from "node:child_process"
import { generateKeyPairSync, randomUUID } from "node:crypto"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import WebSocket from "ws"

const ROOT = resolve(process.argv[2] ?? join(import.meta.dirname, ".."))
const FRAMES = 10
const FRAME_BYTES = 32 * 1024 * 1024

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))
const say = (line: string) => process.stderr.write(`[console-frames] ${line}\n`)

const freePort = () =>
  new Promise<number>((done, fail) => {
    const probe = createServer()
    probe.once("error", fail)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => done(port))
    })
  })

const rssMiB = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0") / 1024
}

const sshKey = () => {
  const raw = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32)
  const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes])
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(raw)]).toString("base64")} frames@zh`
}

const call = async (url: string, path: string, init: { method?: string; body?: unknown; cookie?: string } = {}) => {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      origin: url,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.cookie === undefined ? {} : { cookie: init.cookie })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${text.slice(0, 300)}`)
  return { text, cookie: response.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c?.startsWith("zh_token=")) }
}

const start = async (port: number, dataDir: string): Promise<ChildProcess> => {
  const node = process.execPath
  const child = spawn(node, ["app/main.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      SANDBOX_TASK_SPEED: "instant",
      LOG_LEVEL: "Warn"
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    // Bounded: during its start the port may accept a connection it does not answer yet.
    const status = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0)
    if (status === 200) return child
    await sleep(250)
  }
  throw new Error("the server was not ready within 120 s")
}

/** Sends one frame on a new console connection; the close code, or "open" if the server kept the socket. */
const oversizedFrame = (url: string, vpsId: string, cookie: string, frame: Buffer) =>
  new Promise<number | "open">((done, fail) => {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/api/vps/${vpsId}/console`, { headers: { cookie, origin: url } })
    ws.once("error", () => undefined)
    ws.once("unexpected-response", (_req, res) => fail(new Error(`console refused: ${res.statusCode}`)))
    ws.once("close", (code) => done(code))
    ws.once("open", () => {
      ws.send(frame, { binary: true }, () => {
        // Sent in full and still open after a second: the server took the whole frame.
        setTimeout(() => {
          if (ws.readyState === WebSocket.OPEN) {
            ws.close()
            done("open")
          }
        }, 1_000)
      })
    })
  })

const main = async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "zh-console-frames-"))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  say(`starting ${ROOT} on ${url}`)
  const server = await start(port, dataDir)
  try {
    const email = `frames.${randomUUID()}@example.com`
    const password = "console frames password"
    await call(url, "/api/auth/register", { method: "POST", body: { email, password, accountType: "personal", firstName: "F", lastName: "R" } })
    const cookie = (await call(url, "/api/auth/login", { method: "POST", body: { email, password, rememberMe: false } })).cookie ?? ""
    await call(url, "/api/billing-profile", {
      method: "PUT",
      cookie,
      body: { name: "F R", address: { line1: "1 rue de la Paix", postcode: "75002", city: "Paris", country: "FR" } }
    })
    const placed = JSON.parse((await call(url, "/api/orders", {
      method: "POST",
      cookie,
      body: { planId: "vps-s", expressStartConsent: true, options: { templateId: "debian-12", hostname: "frames", sshPublicKey: sshKey() } }
    })).text) as { order: { id: string; checkoutUrl?: string } }
    await payCheckout(placed.order.checkoutUrl)
    let vpsId = ""
    for (let i = 0; i < 600 && vpsId === ""; i++) {
      const order = JSON.parse((await call(url, `/api/orders/${placed.order.id}`, { cookie })).text) as { status: string; serviceId?: string }
      if (order.status === "failed") throw new Error("the order failed")
      if (order.status === "completed") vpsId = order.serviceId ?? ""
      else await sleep(100)
    }
    const pid = server.pid ?? 0
    // One ordinary console first: what every console costs is in the baseline.
    await oversizedFrame(url, vpsId, cookie, Buffer.from("\r"))
    await sleep(2_000)
    const before = await rssMiB(pid)
    let peak = before
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssMiB(pid))
        await sleep(20)
      }
    })()
    const frame = Buffer.alloc(FRAME_BYTES, 0x61)
    const codes: Array<number | "open"> = []
    for (let i = 0; i < FRAMES; i++) codes.push(await oversizedFrame(url, vpsId, cookie, frame))
    await sleep(2_000)
    sampling = false
    await sampler
    const after = await rssMiB(pid)
    process.stdout.write(`${JSON.stringify({
      root: ROOT,
      frames: FRAMES,
      frameMiB: FRAME_BYTES / 2 ** 20,
      closeCodes: codes,
      rssMiB: { before: Math.round(before), peak: Math.round(peak), after: Math.round(after) },
      growthMiB: { peak: Math.round(peak - before), after: Math.round(after - before) }
    })}\n`)
  } finally {
    server.kill("SIGTERM")
    await sleep(1_000)
    if (server.exitCode === null) server.kill("SIGKILL")
    await rm(dataDir, { recursive: true, force: true })
  }
}

await main()
