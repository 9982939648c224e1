// ProxmoxClusters from the catalog: where a cluster is, how to verify its certificate, and its credentials opened
// from the sealed secrets the catalog file stored (`proxmox:<name>:password`, `proxmox:<name>:token-secret`).
import { Effect, Layer, Option } from "effect"
import { clusterSecretNames } from "../domain/catalog/catalogSecrets.ts"
import { readSecret } from "../domain/secrets/UpstreamCredentials.ts"
import { dieOnDatabaseOutage } from "../domain/ops/dieOnDatabaseOutage.ts"
import { Catalog } from "../ports/Catalog.ts"
import { type ProxmoxAuth, type ProxmoxCluster, ProxmoxClusters } from "../ports/ProxmoxClusters.ts"
import { SecretBox } from "../ports/SecretBox.ts"
import { UpstreamSecrets } from "../ports/UpstreamSecrets.ts"
import { makeReadCache } from "./ReadCache.ts"
import { ClusterUnknown } from "../ports/Virtualization.ts"

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const secrets = yield* UpstreamSecrets
  const box = yield* SecretBox
  // A credential the catalog promises but the store cannot give is a broken installation, not a request error.
  const open = (name: string) =>
    readSecret(name).pipe(
      Effect.provideService(UpstreamSecrets, secrets),
      Effect.provideService(SecretBox, box),
      Effect.catch((e) => Effect.die(new Error(`Cannot open the credential "${name}": ${e.message}`)))
    )

  const load = Effect.fn("ProxmoxClusters.load")(function*(name: string) {
    const found = yield* catalog.cluster(name)
    if (Option.isNone(found) || found.value.retired) return yield* new ClusterUnknown({ cluster: name })
    const cluster = found.value
    const names = clusterSecretNames(name)
    const login = cluster.username === null
      ? null
      : { username: cluster.username, password: yield* open(names.password) }
    const auth: ProxmoxAuth = cluster.tokenId !== null
      ? { kind: "token", tokenId: cluster.tokenId, secret: yield* open(names.tokenSecret), consoleLogin: login }
      : login !== null
      ? { kind: "password", ...login }
      : yield* Effect.die(new Error(`Cluster "${name}" has neither a username nor an API token`))
    return { name: cluster.name, url: cluster.url, auth, tls: cluster.tls } satisfies ProxmoxCluster
  })
  // Every Proxmox call asks for its cluster: keep the opened answer a few seconds rather than read and decrypt
  // it each time; a catalog change (new URL, rotated password) is seen within that time.
  // The cluster port speaks only of the cluster: a catalog that cannot be read stays a defect, as it always was.
  const cache = yield* makeReadCache((name: string) => dieOnDatabaseOutage(load(name)), { ttl: "5 seconds", capacity: 100 })
  return ProxmoxClusters.of({ get: cache.get })
})

/** Needs Catalog, UpstreamSecrets and SecretBox. */
export const layer = Layer.effect(ProxmoxClusters, make)
