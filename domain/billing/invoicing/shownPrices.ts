// The prices a customer sees before paying, by the VAT decision their charge will follow (issueDocuments.ts): a
// signed-in customer by their billing profile (VIES is not asked again here: the order does that), without one yet
// or signed out as a French consumer. The amount shown including VAT is the amount the gateway will be asked for.
import { Clock, Effect, Option } from "effect"
import type { User } from "../../account/User.ts"
import { BillingProfiles } from "../../../ports/BillingProfiles.ts"
import { accountProfile, buyerOf, frenchConsumer, priceWith, vatContext } from "./issueDocuments.ts"
import type { VatCategory } from "./vatDecision.ts"

/** Whom the prices are shown to: a business sees them excluding and including VAT, everyone else including VAT. */
export type PriceAudience = "anonymous" | "consumer" | "business"

export interface ShownPrice {
  readonly priceIncludingVatCents: number
  readonly vatCategory: VatCategory
  readonly vatRateBasisPoints: number
}

/** Each of `pricesExcludingVatCents` (a month of a plan) as `user` would be charged for it now, in the same order. */
export const pricesShownTo = Effect.fn("pricesShownTo")(function*(
  user: Option.Option<User>,
  pricesExcludingVatCents: ReadonlyArray<number>
) {
  const at = yield* Clock.currentTimeMillis
  const buyer = Option.isNone(user) ? frenchConsumer : buyerOf(
    user.value,
    Option.getOrElse(yield* (yield* BillingProfiles).get(user.value.id), () => accountProfile(user.value, new Date(at)))
  )
  const context = yield* vatContext(buyer)
  const audience: PriceAudience = Option.isNone(user) ? "anonymous" : buyer.business ? "business" : "consumer"
  const prices = pricesExcludingVatCents.map((priceCents): ShownPrice => {
    const { amounts, decision } = priceWith(context, buyer, [{ description: "", quantity: 1, unitPriceExcludingVatCents: priceCents }])
    return {
      priceIncludingVatCents: amounts.totalIncludingVatCents,
      vatCategory: decision.category,
      vatRateBasisPoints: decision.rateBasisPoints
    }
  })
  return { audience, prices }
})
