// The public catalog routes: the plans on sale (one use case, nothing to map: reading the catalog cannot fail but by a
// defect) and the platform's mode, which the panel reads to show its demo banner.
import { Context, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { listPlansForSale, UnsoldUpstreams } from "../../domain/catalog/listPlansForSale.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"

/** How this deployment runs, as the public may know it; the app builds it from configuration. */
export class PlatformInfo extends Context.Service<PlatformInfo, {
  /** Sandbox mode: simulated upstreams, demo plans, payments approved without taking money. */
  readonly sandbox: boolean
}>()("zh/http/PlatformInfo") {}

export const CatalogHandlers = HttpApiBuilder.group(Api, "catalog", Effect.fn(function*(handlers) {
  const catalog = yield* Catalog
  const platform = yield* PlatformInfo
  const unsold = yield* UnsoldUpstreams
  return handlers
    .handle("plans", () =>
      listPlansForSale.pipe(
        Effect.provideService(Catalog, catalog),
        Effect.provideService(UnsoldUpstreams, unsold),
        Effect.map((plans) => ({ plans })),
        mapDomainErrors
      ))
    .handle("platform", () => Effect.succeed({ sandbox: platform.sandbox }))
}))
