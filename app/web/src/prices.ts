// A plan's price as the visitor pays it (GET /api/plans prices it by their VAT situation): including VAT, said so,
// and for a business excluding VAT too (or the reverse charge that leaves it at that).
import type { Plan, Plans } from "./api.ts"
import { formatPrice, t } from "./i18n.ts"

export const shownPrice = (plan: Plan, audience: Plans["audience"]): string =>
  audience !== "business"
    ? t("price.inclVat", { price: formatPrice(plan.priceIncludingVatCents) })
    : plan.vatCategory === "AE"
    ? t("price.reverseCharge", { excl: formatPrice(plan.priceCents) })
    : t("price.both", { excl: formatPrice(plan.priceCents), incl: formatPrice(plan.priceIncludingVatCents) })
