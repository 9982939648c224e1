// The billing profile's routes: the domain's profile as the contract's view.
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { BillingProfile } from "../../domain/billing/invoicing/BillingProfile.ts"
import { saveBillingProfile, viewBillingProfile } from "../../domain/billing/invoicing/manageBillingProfile.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"
import type { BillingProfileView } from "./views.ts"

const present = <K extends string, V>(key: K, value: V | null) =>
  (value === null ? {} : { [key]: value }) as { readonly [P in K]?: V }

export const billingProfileView = (profile: BillingProfile, saved: boolean): typeof BillingProfileView.Type => ({
  name: profile.name,
  ...present("companyName", profile.companyName),
  address: {
    line1: profile.address.line1,
    ...present("line2", profile.address.line2),
    postcode: profile.address.postcode,
    city: profile.address.city,
    country: profile.address.country
  },
  ...present("vatNumber", profile.vatNumber),
  ...present(
    "vatNumberCheck",
    profile.vatCheck === null ? null : {
      status: profile.vatCheck.status,
      checkedAt: profile.vatCheck.checkedAt.toISOString(),
      ...present("requestIdentifier", profile.vatCheck.requestIdentifier)
    }
  ),
  saved
})

export const BillingProfileHandlers = HttpApiBuilder.group(Api, "billingProfile", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<
    Effect.Services<ReturnType<typeof viewBillingProfile>> | Effect.Services<ReturnType<typeof saveBillingProfile>>
  >()
  return handlers
    .handle("get", () =>
      Effect.flatMap(CurrentSession, (session) => viewBillingProfile(session.user)).pipe(
        Effect.map(({ profile, saved }) => billingProfileView(profile, saved)),
        Effect.provideContext(services),
        mapDomainErrors
      ))
    .handle("save", ({ payload }) =>
      Effect.flatMap(CurrentSession, (session) => saveBillingProfile(session.user, payload)).pipe(
        Effect.map((profile) => billingProfileView(profile, true)),
        Effect.provideContext(services),
        mapDomainErrors
      ))
}))
