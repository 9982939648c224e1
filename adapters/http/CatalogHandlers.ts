// The public catalog route: one use case, nothing to map (reading the catalog cannot fail but by a defect).
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { listPlansForSale } from "../../domain/catalog/listPlansForSale.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { Api } from "./Api.ts"

export const CatalogHandlers = HttpApiBuilder.group(Api, "catalog", Effect.fn(function*(handlers) {
  const catalog = yield* Catalog
  return handlers.handle("plans", () =>
    listPlansForSale.pipe(
      Effect.provideService(Catalog, catalog),
      Effect.map((plans) => ({ plans }))
    ))
}))
