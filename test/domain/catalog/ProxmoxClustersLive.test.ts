// ProxmoxClusters from the catalog and the sealed credentials a catalog file stored.
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import * as ProxmoxClustersLive from "../../../app/ProxmoxClustersLive.ts"
import { Catalog } from "../../../ports/Catalog.ts"
import { ProxmoxClusters } from "../../../ports/ProxmoxClusters.ts"
import { UpstreamSecrets } from "../../../ports/UpstreamSecrets.ts"
import { apply, catalogEnv, catalogFile, cluster, files, PEM, PVE_PASSWORD, TOKEN_SECRET } from "./catalogMother.ts"

const env = () => ProxmoxClustersLive.layer.pipe(Layer.provideMerge(catalogEnv()))
const get = (name: string) => Effect.flatMap(ProxmoxClusters, (clusters) => clusters.get(name))
const reveal = (r: Redacted.Redacted<string>) => Redacted.value(r)

describe("ProxmoxClusters from the catalog", () => {
  it.effect("a password cluster signs in with its username and opened password, and keeps its TLS settings", () =>
    Effect.gen(function*() {
      yield* apply(
        catalogFile({ proxmox: [cluster({ tls: { caFile: "ca.pem", fingerprint: null, insecure: false } })] }),
        files({ "ca.pem": PEM })
      )
      const pve = yield* get("pve")
      assert.deepStrictEqual({ ...pve, auth: null }, {
        name: "pve",
        url: "https://pve.example:8006",
        auth: null,
        tls: { ca: PEM.trim(), fingerprint: null, insecure: false }
      })
      assert.isTrue(pve.auth.kind === "password" && pve.auth.username === "root@pam" && reveal(pve.auth.password) === PVE_PASSWORD)
    }).pipe(Effect.provide(env())))

  it.effect("a token cluster uses its token, with the user login kept for the serial console when there is one", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile({
        proxmox: [
          cluster({ tokenId: "api@pve!zh", tokenSecret: TOKEN_SECRET }),
          cluster({ name: "lab", username: null, password: null, tokenId: "api@pve!lab", tokenSecret: "lab-secret" })
        ]
      }))
      const pve = (yield* get("pve")).auth
      assert.isTrue(pve.kind === "token" && pve.tokenId === "api@pve!zh" && reveal(pve.secret) === TOKEN_SECRET)
      assert.isTrue(pve.kind === "token" && pve.consoleLogin?.username === "root@pam" && reveal(pve.consoleLogin.password) === PVE_PASSWORD)
      const lab = (yield* get("lab")).auth
      assert.isTrue(lab.kind === "token" && lab.consoleLogin === null && reveal(lab.secret) === "lab-secret")
    }).pipe(Effect.provide(env())))

  it.effect("an unknown or retired cluster is ClusterUnknown", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      yield* (yield* Catalog).retire("cluster", "pve")
      const retired = yield* Effect.flip(get("pve"))
      const unknown = yield* Effect.flip(get("nowhere"))
      assert.deepStrictEqual([retired._tag, retired.cluster, unknown._tag, unknown.cluster], ["ClusterUnknown", "pve", "ClusterUnknown", "nowhere"])
    }).pipe(Effect.provide(env())))

  it.effect("a credential that cannot be opened is a defect naming it, never a wrong sign-in", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      yield* (yield* UpstreamSecrets).remove("proxmox:pve:password")
      const exit = yield* Effect.exit(get("pve"))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.include(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "", `Cannot open the credential "proxmox:pve:password"`)
    }).pipe(Effect.provide(env())))
})
