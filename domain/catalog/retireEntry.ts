// Retiring a catalog entry: it is no longer sold or chosen, while the services already using it keep working.
import { Effect, Schema } from "effect"
import { Catalog, type CatalogKind } from "../../ports/Catalog.ts"

export class CatalogEntryUnknown extends Schema.TaggedError<CatalogEntryUnknown>()("CatalogEntryUnknown", {
  kind: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `No ${this.kind} "${this.id}" in the catalog`
  }
}

/** Retiring twice is fine; an id the catalog never had is an error, so a typo does not pass for success. */
export const retireEntry = Effect.fn("retireEntry")(function*(kind: CatalogKind, id: string) {
  if (!(yield* (yield* Catalog).retire(kind, id))) return yield* new CatalogEntryUnknown({ kind, id })
})
