// A scripted upstream on loopback for the registry adapters' specifications: each request is filed under a key read
// from its URL (the SIRET), recorded, and answered as that key's scenario says for its n-th request.
import { createServer, type IncomingHttpHeaders } from "node:http"
import { NodeHttpClient } from "@effect/platform-node"
import { Clock, Context, Effect, Layer, Logger } from "effect"
import type { HttpClient } from "effect/http"
import type { AttemptPolicy } from "../../../adapters/registry/upstreamHttp.ts"
import { BusinessRegistry } from "../../../ports/BusinessRegistry.ts"

export type Reply =
  | {
    readonly status: number
    readonly body?: string
    readonly headers?: Record<string, string>
    /** Send the head and `body`, then never finish the answer. */
    readonly stall?: true
  }
  /** Accept the request and never answer. */
  | "hang"
  /** Drop the connection. */
  | "reset"

export interface Seen {
  readonly url: URL
  readonly headers: IncomingHttpHeaders
}

export const ok = (body: string): Reply => ({ status: 200, body })

export interface Script {
  /** Where the API sits on the server, e.g. "/api-sirene/3.11"; "" for the root. */
  readonly basePath: string
  readonly contentType: string
  /** The scenario a request belongs to. */
  readonly keyOf: (url: URL) => string
  /** `attempt` counts the requests for that key from 0. */
  readonly scenarios: Record<string, (attempt: number) => Reply>
  readonly unscripted: Reply
}

export class Upstream extends Context.Service<Upstream, {
  readonly baseUrl: string
  requestsFor(key: string): ReadonlyArray<Seen>
}>()("test/registry/Upstream") {}

const upstreamLive = (script: Script) =>
  Layer.effect(
    Upstream,
    Effect.gen(function*() {
      const seen = new Map<string, Array<Seen>>()
      const server = createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://127.0.0.1")
        const key = script.keyOf(url)
        const mine = seen.get(key) ?? []
        mine.push({ url, headers: req.headers })
        seen.set(key, mine)
        const reply = script.scenarios[key]?.(mine.length - 1) ?? script.unscripted
        if (reply === "hang") return
        if (reply === "reset") return req.socket.destroy()
        res.writeHead(reply.status, { "content-type": script.contentType, ...reply.headers })
        if (reply.stall) return res.write(reply.body ?? "")
        res.end(reply.body ?? "")
      })
      const port = yield* Effect.acquireRelease(
        Effect.callback<number>((resume) => {
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resume(typeof address === "object" && address !== null ? Effect.succeed(address.port) : Effect.die("no port"))
          })
        }),
        () =>
          Effect.callback<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      return Upstream.of({
        baseUrl: `http://127.0.0.1:${port}${script.basePath}`,
        requestsFor: (key) => seen.get(key) ?? []
      })
    })
  )

/** The stub and a real HTTP client. Silent by default: a test that specifies a warning provides its own logger. */
export const stubEnv = (script: Script) =>
  Layer.mergeAll(upstreamLive(script), NodeHttpClient.layerUndici, Logger.layer([]))

/** Short enough for a quick suite; two retries make three attempts, as the suites count them. */
export const testPolicy: AttemptPolicy = { timeout: "500 millis", retries: 2, retryBaseDelay: "10 millis" }

/** A lookup through the adapter `layer` builds from `optionsFor(the stub's base URL)`, with `overrides` on top. */
export const registryUnderTest = <O>(
  layer: (options: O) => Layer.Layer<BusinessRegistry, never, HttpClient.HttpClient>,
  optionsFor: (baseUrl: string) => O
) => {
  const lookUp = (siret: string, overrides: Partial<O> = {}) =>
    Effect.gen(function*() {
      const { baseUrl } = yield* Upstream
      return yield* Effect.flatMap(BusinessRegistry, (registry) => registry.lookUpSiret(siret)).pipe(
        Effect.provide(layer({ ...optionsFor(baseUrl), ...overrides }))
      )
    })
  const failureOf = (siret: string, overrides: Partial<O> = {}) => Effect.flip(lookUp(siret, overrides))
  return { lookUp, failureOf }
}

export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const result = yield* effect
    return { result, elapsed: (yield* Clock.currentTimeMillis) - start }
  })

export const attempts = (key: string) => Effect.map(Upstream, (u) => u.requestsFor(key).length)
