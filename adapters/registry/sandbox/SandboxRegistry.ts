// The registry simulation as sandbox mode uses it: one instance per application (memoized by this module's layer),
// the real Recherche d'entreprises and VIES adapters pointed at it through its in-memory HttpClient.
import { Context, Effect, Layer, type Scope } from "effect"
import { createServer } from "node:http"
import * as RechercheEntreprisesRegistry from "../RechercheEntreprisesRegistry.ts"
import type { AttemptPolicy } from "../upstreamHttp.ts"
import * as ViesVatRegistry from "../ViesVatRegistry.ts"
import { paths, type RegistrySimulation, registrySimulation, sandboxHost } from "./RegistrySimulation.ts"

export class SandboxRegistryInstance extends Context.Service<SandboxRegistryInstance, RegistrySimulation>()(
  "adapters/registry/SandboxRegistry"
) {}

/** One seeded simulation; a running sandbox keeps the newest 10,000 requests in its log. */
export const layerSimulation: Layer.Layer<SandboxRegistryInstance> = Layer.effect(
  SandboxRegistryInstance,
  registrySimulation({ requestLogLimit: 10_000 })
)

const httpClient = Layer.unwrap(Effect.map(SandboxRegistryInstance, (simulation) => simulation.httpClient))

/** The real Recherche d'entreprises adapter over the simulation. */
export const businessRegistry = (policy: AttemptPolicy) =>
  RechercheEntreprisesRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.rechercheEntreprises}` }).pipe(
    Layer.provide(httpClient),
    Layer.provide(layerSimulation)
  )

/** The real VIES adapter over the simulation. */
export const vatRegistry = (policy: AttemptPolicy) =>
  ViesVatRegistry.layer({ ...policy, baseUrl: `${sandboxHost}${paths.vies}` }).pipe(
    Layer.provide(httpClient),
    Layer.provide(layerSimulation)
  )

/**
 * The simulation on loopback, for a test about real sockets or a process outside this one: each request goes through
 * the simulation's `fetch`, so faults hold there too (a drop destroys the socket; a hang ends when the client leaves).
 * Closed with its scope.
 */
export const serveOnLoopback = (
  simulation: RegistrySimulation,
  options: { readonly host?: string; readonly port?: number } = {}
): Effect.Effect<{ readonly baseUrl: string }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const server = createServer((req, res) => {
      const controller = new AbortController()
      res.on("close", () => controller.abort())
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
      }
      simulation.fetch(`http://${host}${req.url ?? "/"}`, { method: req.method ?? "GET", headers, signal: controller.signal })
        .then(async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers))
          if (response.body !== null) {
            for await (const chunk of response.body) res.write(chunk)
          }
          res.end()
        })
        .catch(() => req.socket.destroy())
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        server.listen(options.port ?? 0, host, () => {
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    return { baseUrl: `http://${host.includes(":") ? `[${host}]` : host}:${port}` }
  })
