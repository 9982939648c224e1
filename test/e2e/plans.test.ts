// GET /api/plans over real HTTP, on a real database holding an applied catalog (and nothing else: no sandbox
// catalog), with the catalog group served on its own.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, ManagedRuntime, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryBillingProfiles from "../../adapters/fake/MemoryBillingProfiles.ts"
import * as MemoryInvoices from "../../adapters/fake/MemoryInvoices.ts"
import { MaybeSession, SessionIfSignedIn } from "../../adapters/http/AccountsApi.ts"
import { RequestValidationLive } from "../../adapters/http/AccountsHandlers.ts"
import { DatabaseOutageLive } from "../../adapters/http/HttpApp.ts"
import { CatalogApi } from "../../adapters/http/CatalogApi.ts"
import { CatalogHandlers, PlatformInfo } from "../../adapters/http/CatalogHandlers.ts"
import * as PgCatalog from "../../adapters/postgres/PgCatalog.ts"
import * as PgUpstreamSecrets from "../../adapters/postgres/PgUpstreamSecrets.ts"
import {
  apply,
  APPLICATION_KEY,
  catalogFile,
  CLIENT_KEY,
  encryptionKeys,
  gamePlan,
  PVE_PASSWORD,
  vpsPlan
} from "../domain/catalog/catalogMother.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { testInvoicingSettings } from "../support/invoicing.ts"
import { testDatabase } from "../support/testServer.ts"

class ServerUrl extends Context.Service<ServerUrl, { readonly url: string }>()("test/plans/ServerUrl") {}

const stores = Layer.mergeAll(PgCatalog.layer, PgUpstreamSecrets.layer, AesGcmSecretBox.layer(encryptionKeys)).pipe(
  Layer.provide(testDatabase())
)
/** No sessions here: every visitor is signed out (signed-in prices: planPrices.test.ts). */
const signedOut = Layer.succeed(
  SessionIfSignedIn,
  SessionIfSignedIn.of((httpEffect) => Effect.provideService(httpEffect, MaybeSession, Effect.succeedNone))
)
/** Only the catalog group, under the application's API id: its handlers are found by group name. */
class CatalogOnlyApi extends HttpApi.make("zh").add(CatalogApi) {}
const routes = HttpApiBuilder.layer(CatalogOnlyApi).pipe(
  Layer.provide(CatalogHandlers),
  Layer.provide([signedOut, testInvoicingSettings, MemoryInvoices.layer, MemoryBillingProfiles.layer]),
  Layer.provide(RequestValidationLive),
  Layer.provide(DatabaseOutageLive),
  Layer.provide(Layer.succeed(PlatformInfo, { sandbox: false }))
)
const runtime = ManagedRuntime.make(
  Layer.effect(ServerUrl, HttpServer.addressFormattedWith((url) => Effect.succeed({ url }))).pipe(
    Layer.provideMerge(HttpRouter.serve(routes, { disableLogger: true })),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(stores),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
)

let url = ""
beforeAll(async () => {
  url = (await runtime.runPromise(ServerUrl)).url
  await runtime.runPromise(apply(catalogFile({
    plans: [vpsPlan({ priceCents: 800 }), gamePlan(), vpsPlan({ id: "vps-old", templates: ["debian-12"] })]
  })))
  await runtime.runPromise(Effect.flatMap(Catalog, (catalog) => catalog.retire("plan", "vps-old")))
}, 60_000)
afterAll(() => runtime.dispose())

describe("GET /api/plans", () => {
  it("answers the plans on sale by price, publicly, with their public fields only, including French VAT", async () => {
    const reply = await fetch(`${url}/api/plans`)
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toContain("application/json")
    expect(await reply.json()).toEqual({
      audience: "anonymous",
      plans: [
        {
          id: "mc-2g", kind: "game", name: "Minecraft 2 GB", priceCents: 600, priceIncludingVatCents: 720, vatCategory: "S",
          vatRateBasisPoints: 2000, memoryMiB: 2048, diskMiB: 10240, cpuPercent: 200,
          databases: 0, backups: 2, allocations: 1, userVariables: ["MINECRAFT_VERSION"]
        },
        {
          id: "vps-s", kind: "vps", name: "VPS S", priceCents: 800, priceIncludingVatCents: 960, vatCategory: "S",
          vatRateBasisPoints: 2000, vcpu: 1, ramMiB: 1024, diskGiB: 20, snapshotLimit: 2,
          templates: [{ id: "debian-12", name: "Debian 12" }]
        }
      ]
    })
  })

  it("GET /api/platform says, publicly, whether the platform is a sandbox", async () => {
    const reply = await fetch(`${url}/api/platform`)
    expect(reply.status).toBe(200)
    expect(await reply.json()).toEqual({ sandbox: false })
  })

  it("never shows where the upstreams are or how to sign in to them", async () => {
    const text = await (await fetch(`${url}/api/plans`)).text()
    for (const hidden of ["panel.example", "pve.example", "yolks", "eggId", "SERVER_JARFILE", "vmid", PVE_PASSWORD, APPLICATION_KEY, CLIENT_KEY]) {
      expect(text).not.toContain(hidden)
    }
  })
})
