// GamePanels from the catalog: where a panel is and its two API keys opened from the sealed secrets the catalog file
// stored (`pterodactyl:<name>:application-key`, `pterodactyl:<name>:client-key`).
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { panelSecretNames } from "../domain/catalog/catalogSecrets.ts"
import { readSecret } from "../domain/secrets/UpstreamCredentials.ts"
import { dieOnDatabaseOutage } from "../domain/ops/dieOnDatabaseOutage.ts"
import { Catalog } from "../ports/Catalog.ts"
import { GamePanels, type PanelConnection, PanelUnknown } from "../ports/GamePanel.ts"
import { SecretBox } from "../ports/SecretBox.ts"
import { UpstreamSecrets } from "../ports/UpstreamSecrets.ts"
import { makeReadCache } from "./ReadCache.ts"

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const secrets = yield* UpstreamSecrets
  const box = yield* SecretBox
  // A missing key makes the panel unusable, as the port says (PanelUnknown); a stored key that does not open is a
  // broken installation, not a request error.
  const open = (panel: string, name: string) =>
    readSecret(name).pipe(
      Effect.provideService(UpstreamSecrets, secrets),
      Effect.provideService(SecretBox, box),
      Effect.catchTag("SecretNotFound", () => Effect.fail(new PanelUnknown({ panel }))),
      Effect.catch((e) =>
        e._tag === "PanelUnknown" ? Effect.fail(e) : Effect.die(new Error(`Cannot open the credential "${name}": ${e.message}`))
      )
    )

  const load = Effect.fn("GamePanels.load")(function*(name: string) {
    const found = yield* catalog.panel(name)
    if (Option.isNone(found) || found.value.retired) return yield* new PanelUnknown({ panel: name })
    const names = panelSecretNames(name)
    return {
      name: found.value.name,
      url: found.value.url,
      applicationKey: yield* open(name, names.applicationKey),
      clientKey: yield* open(name, names.clientKey)
    } satisfies PanelConnection
  })
  // Every panel call asks for its panel: keep the opened answer a few seconds rather than read and decrypt it each
  // time; a catalog change (new URL, rotated key) is seen within that time.
  // The panel port speaks only of the panel: a catalog that cannot be read stays a defect, as it always was.
  // A panel asked for inside a database transaction (a provisioning step under its lock) is read on that
  // transaction's connection, past the cache (ReadCache.ts says why: a lookup waiting for a pooled connection the
  // transactions hold would never come back).
  const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
  const cache = yield* makeReadCache((name: string) => dieOnDatabaseOutage(load(name)), {
    ttl: "5 seconds",
    capacity: 100,
    inTransaction: Option.match(sql, {
      onNone: () => undefined,
      onSome: (client) => Effect.map(Effect.serviceOption(client.transactionService), Option.isSome)
    })
  })
  return GamePanels.of({ get: cache.get })
})

/** Needs Catalog, UpstreamSecrets and SecretBox. */
export const layer = Layer.effect(GamePanels, make)
