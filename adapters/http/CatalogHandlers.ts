// The public catalog routes: the plans on sale, priced for the visitor (including VAT as they would pay it) and the platform's mode, which the panel reads to show its demo banner.
import { Context, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { pricesShownTo } from "../../domain/billing/invoicing/shownPrices.ts"
import { listPlansForSale, UnsoldUpstreams } from "../../domain/catalog/listPlansForSale.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { MaybeSession } from "./AccountsApi.ts"
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
  const pricing = yield* Effect.context<Effect.Services<ReturnType<typeof pricesShownTo>>>()
  return handlers
    .handle("plans", () =>
      Effect.gen(function*() {
        const plans = yield* listPlansForSale.pipe(
          Effect.provideService(Catalog, catalog),
          Effect.provideService(UnsoldUpstreams, unsold)
        )
        // The prices as the visitor would pay them: a signed-in customer's by their billing profile.
        const session = yield* (yield* MaybeSession)
        const { audience, prices } = yield* pricesShownTo(
          Option.map(session, (s) => s.user),
          plans.map((plan) => plan.priceCents)
        ).pipe(Effect.provideContext(pricing))
        return { audience, plans: plans.map((plan, i) => ({ ...plan, ...prices[i]! })) }
      }).pipe(mapDomainErrors))
    .handle("platform", () => Effect.succeed({ sandbox: platform.sandbox }))
}))
