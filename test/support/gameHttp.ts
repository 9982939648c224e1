// What the game-server end-to-end suites share: the leak scanner for the sandbox panel and its node, a customer's
// order followed to its end, the console WebSocket (every frame scanned), and raw uploads and downloads.
import { paid } from "./checkout.ts"
import { Effect, Option, Schema } from "effect"
import { expect } from "vitest"
import WebSocket from "ws"
import { GameServerView, OrderView } from "../../adapters/http/views.ts"
import { SandboxPanel } from "../../app/sandbox/SandboxUpstreams.ts"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { sweepLifecycle } from "../../domain/billing/sweepLifecycle.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import {
  type ScannedBrowser,
  Envelopes,
  expectBody,
  type LeakScanner,
  leakScanner,
  scannerFor,
  type TestServer,
  waitFor
} from "./vpsHttp.ts"

export const GameEnvelopes = {
  gameServer: Schema.Struct({ gameServer: GameServerView }),
  gameServers: Schema.Struct({ gameServers: Schema.Array(GameServerView) }),
  websocket: Schema.Struct({ data: Schema.Struct({ token: Schema.String, socket: Schema.String }) })
} as const

/** The sandbox panel this server registered (its control, its panel and node URLs). */
export const sandboxPanelOf = async (server: TestServer): Promise<SandboxPterodactyl> =>
  Option.getOrThrow(await server.runtime.runPromise(Effect.gen(function*() {
    return yield* SandboxPanel
  })))

/**
 * What must never reach a customer: the panel's and the node's host:port, and the panel's API keys — also inside
 * any JWT the text carries (a Wings token names both in its `iss` and `aud` claims, base64-encoded).
 */
export const gameLeakScanner = (panel: SandboxPterodactyl): LeakScanner => {
  const plain = scannerFor([new URL(panel.url).host, new URL(panel.nodeUrl).host, panel.applicationKey, panel.clientKey, "ptla_", "ptlc_"])
  return (where, text) => {
    plain(where, text)
    for (const jwt of text.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g) ?? []) {
      plain(`${where}, a JWT's claims`, Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"))
    }
  }
}

/** One scanner for both sandboxes of a test server: the Proxmox's and the panel's (and its node's) secrets. */
export const sandboxesLeakScanner = async (server: TestServer): Promise<LeakScanner> => {
  const vpsScan = await leakScanner(server)
  const gameScan = gameLeakScanner(await sandboxPanelOf(server))
  return (where, text) => {
    vpsScan(where, text)
    gameScan(where, text)
  }
}

/** Orders `planId` and follows it to its end: the completed order and the progress steps seen. */
export const orderGame = async (browser: ScannedBrowser, planId = "mc-2g", variables?: Record<string, string>) =>
  followOrder(
    browser,
    expectBody(await browser.post("/api/orders", { planId, expressStartConsent: true, options: variables === undefined ? {} : { variables } }), 201, Envelopes.order).order
  )

/** Pays an order just placed and follows it to its end: the completed order and the progress steps seen. */
export const followOrder = async (browser: ScannedBrowser, placed: typeof Envelopes.order.Type["order"]) => {
  await paid(placed)
  const steps: Array<string> = []
  const order = await waitFor(`order ${placed.id} to finish`, async () => {
    const current = expectBody(await browser.get(`/api/orders/${placed.id}`), 200, OrderView)
    const label = `${current.progress.step}/${current.progress.total} ${current.progress.name}`
    if (steps.at(-1) !== label) steps.push(label)
    return current.status === "completed" || current.status === "failed" ? current : undefined
  })
  return { placed, order, steps }
}

export const provisionedGame = async (browser: ScannedBrowser, variables?: Record<string, string>) => {
  const { order, steps } = await orderGame(browser, "mc-2g", variables)
  expect(order.status, order.failureReason).toBe("completed")
  const gameServer = expectBody(await browser.get(`/api/game-servers/${order.serviceId}`), 200, GameEnvelopes.gameServer).gameServer
  return { order, steps, gameServer, subscriptionId: order.subscriptionId! }
}

export interface ConsoleClient {
  readonly frames: Array<{ readonly event: string; readonly args?: ReadonlyArray<string> }>
  send(event: string, ...args: Array<string>): void
  /** Waits until a frame matching `match` arrives (after `from`, an index into `frames`). */
  waitFor(what: string, match: (f: { readonly event: string; readonly args?: ReadonlyArray<string> }) => boolean, from?: number): Promise<void>
  readonly closed: Promise<{ readonly code: number; readonly reason: string }>
  close(): void
}

/** Opens our console socket for `identifier` with the browser's cookie; every frame passes through the scanner. */
export const openGameConsole = (
  server: TestServer,
  browser: ScannedBrowser,
  identifier: string,
  options: { readonly origin?: string } = {}
): Promise<ConsoleClient> =>
  new Promise((resolve, reject) => {
    const url = `${server.url.replace(/^http/, "ws")}/api/client/servers/${identifier}/ws`
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    const socket = new WebSocket(url, { headers: { cookie, origin: options.origin ?? "http://panel.test" } })
    const frames: ConsoleClient["frames"] = []
    const waiters: Array<() => void> = []
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      socket.on("close", (code, reason) => done({ code, reason: reason.toString() })))
    socket.on("message", (data) => {
      const text = data.toString()
      browser.scan(`console frame`, text)
      frames.push(JSON.parse(text))
      for (const w of waiters.splice(0)) w()
    })
    socket.on("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
    socket.on("error", reject)
    socket.on("open", () =>
      resolve({
        frames,
        send: (event, ...args) => socket.send(JSON.stringify(args.length === 0 ? { event } : { event, args })),
        waitFor: (what, match, from = 0) =>
          waitFor(what, () => {
            const hit = frames.slice(from).some(match)
            return Promise.resolve(hit ? true : undefined)
          }, 5_000).then(() => undefined),
        closed,
        close: () => socket.close()
      }))
  })

/** The status of a WebSocket upgrade that is refused (the test fails if it is accepted). */
export const refusedUpgrade = (server: TestServer, path: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}${path}`, { headers })
    socket.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0)
      socket.terminate()
    })
    socket.on("open", () => {
      socket.close()
      reject(new Error(`the upgrade of ${path} was accepted`))
    })
    socket.on("error", () => undefined)
  })

/** Uploads files as the panel's upload form does (multipart, parts named `files`), to our streaming route. */
export const uploadFiles = async (browser: ScannedBrowser, uploadUrl: string, directory: string, files: ReadonlyArray<{ name: string; bytes: Uint8Array }>) => {
  const form = new FormData()
  for (const f of files) form.append("files", new Blob([Buffer.from(f.bytes)]), f.name)
  const url = new URL(uploadUrl)
  url.searchParams.set("directory", directory)
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  const response = await fetch(`${browser.baseUrl}${url.pathname}${url.search}`, { method: "POST", body: form, headers: { cookie } })
  const text = await response.text()
  browser.scan(`upload (${response.status})`, text)
  return { status: response.status, text }
}

/** Fetches one of our signed URLs (its origin is the public URL; the test server listens elsewhere). */
export const fetchSigned = async (browser: ScannedBrowser, signedUrl: string) => {
  const url = new URL(signedUrl)
  expect(url.origin).toBe("http://panel.test")
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  const response = await fetch(`${browser.baseUrl}${url.pathname}${url.search}`, { headers: { cookie } })
  const bytes = new Uint8Array(await response.arrayBuffer())
  const headers = [...response.headers].map(([n, v]) => `${n}: ${v}`).join("\n")
  browser.scan(`download (${response.status})`, headers)
  return { status: response.status, headers: response.headers, bytes }
}

/** Ends the subscription's period at `at` and runs one game lifecycle sweep, as the cron would. */
export const lapseGame = (server: TestServer, subscriptionId: string, at: Date) =>
  server.runtime.runPromise(Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    const current = Option.getOrThrow(yield* subscriptions.get(subscriptionId))
    if (!(yield* subscriptions.extend(subscriptionId, current.currentPeriodEnd, at))) {
      return yield* Effect.die(new Error(`subscription ${subscriptionId} could not be moved`))
    }
    yield* sweepLifecycle
  }))
