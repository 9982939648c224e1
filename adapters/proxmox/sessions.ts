// One session per cluster, made on first use and kept while the cluster's connection data stays the same; a change
// (rotated secret, new certificate pin) gets a fresh session. Token clusters get a second, ticket session for the
// console, which API tokens cannot open on most releases (reference/proxmox.md §4.4).
import { Effect, Redacted, Scope, Semaphore } from "effect"
import type { ProxmoxAuth, ProxmoxCluster, ProxmoxClusters } from "../../ports/ProxmoxClusters.ts"
import type { ClusterUnknown } from "../../ports/Virtualization.ts"
import { makeSession, type ProxmoxSession, type SessionOptions } from "./ProxmoxSession.ts"

export interface Sessions {
  /** The session every API call of `cluster` goes through. */
  api(cluster: string): Effect.Effect<ProxmoxSession, ClusterUnknown>
  /** A ticket session for the console; null when the cluster signs in with a token and has no console login. */
  forConsole(cluster: string): Effect.Effect<ProxmoxSession | null, ClusterUnknown>
}

const sameSecret = (a: Redacted.Redacted<string>, b: Redacted.Redacted<string>) =>
  Redacted.value(a) === Redacted.value(b)

const sameAuth = (a: ProxmoxAuth, b: ProxmoxAuth): boolean => {
  if (a.kind === "password" && b.kind === "password") {
    return a.username === b.username && sameSecret(a.password, b.password)
  }
  if (a.kind === "token" && b.kind === "token") {
    const [x, y] = [a.consoleLogin, b.consoleLogin]
    const sameLogin = x === null || y === null
      ? x === y
      : x.username === y.username && sameSecret(x.password, y.password)
    return a.tokenId === b.tokenId && sameSecret(a.secret, b.secret) && sameLogin
  }
  return false
}

const sameCluster = (a: ProxmoxCluster, b: ProxmoxCluster) =>
  a.url === b.url && a.tls.ca === b.tls.ca && a.tls.fingerprint === b.tls.fingerprint &&
  a.tls.insecure === b.tls.insecure && sameAuth(a.auth, b.auth)

interface Entry {
  readonly cluster: ProxmoxCluster
  readonly session: ProxmoxSession
}

/**
 * Sessions live in the layer's scope. A replaced session is not closed at once (calls may still be using it); its
 * agents are released with the layer, and credential changes are rare enough for that to stay small.
 */
export const makeSessions = (clusters: ProxmoxClusters["Service"], options: SessionOptions) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const gate = yield* Semaphore.make(1)
    const apiEntries = new Map<string, Entry>()
    const consoleEntries = new Map<string, Entry>()

    const cached = (
      entries: Map<string, Entry>,
      cluster: ProxmoxCluster,
      make: Effect.Effect<ProxmoxSession, never, Scope.Scope>
    ) =>
      gate.withPermit(Effect.gen(function*() {
        const found = entries.get(cluster.name)
        if (found !== undefined && sameCluster(found.cluster, cluster)) return found.session
        const session = yield* make.pipe(Scope.provide(scope))
        entries.set(cluster.name, { cluster, session })
        return session
      }))

    const api = (name: string) =>
      Effect.flatMap(clusters.get(name), (cluster) => cached(apiEntries, cluster, makeSession(cluster, options)))

    const forConsole = (name: string) =>
      Effect.flatMap(clusters.get(name), (cluster): Effect.Effect<ProxmoxSession | null> => {
        if (cluster.auth.kind === "password") return cached(apiEntries, cluster, makeSession(cluster, options))
        const login = cluster.auth.consoleLogin
        if (login === null) return Effect.succeed(null)
        return cached(consoleEntries, cluster, makeSession(cluster, options, login))
      })

    return { api, forConsole } satisfies Sessions
  })
