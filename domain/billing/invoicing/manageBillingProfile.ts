// Viewing and editing the billing profile: validated, prefilled for a professional account from the registry (company
// name, head office, the French VAT number of its SIREN), and the VAT number checked with VIES whenever it changes.
import { Clock, Effect, Option } from "effect"
import type { User } from "../../account/User.ts"
import { BillingProfiles } from "../../../ports/BillingProfiles.ts"
import { BusinessRegistry } from "../../../ports/BusinessRegistry.ts"
import { VatRegistry } from "../../../ports/VatRegistry.ts"
import { BillingProfile, type BillingProfileInput, isCountryCode, type VatCheckRecord } from "./BillingProfile.ts"
import { BillingProfileRequired, InvalidBillingProfile, InvalidVatNumber } from "./InvoicingErrors.ts"
import { frenchVatNumber, parseVatNumber, type VatNumber } from "./vatNumber.ts"

export interface BillingProfileView {
  readonly profile: BillingProfile
  /** False until the customer saved it: what is shown is a prefill to complete and confirm. */
  readonly saved: boolean
}

/** What the customer sees before saving: their name, and for a professional account what the registry says. */
const prefill = (user: User, at: Date) =>
  Effect.gen(function*() {
    const siren = user.siret?.slice(0, 9)
    const status = user.siret === null
      ? undefined
      : yield* (yield* BusinessRegistry).lookUpSiret(user.siret).pipe(Effect.orElseSucceed(() => undefined))
    const office = status?._tag === "Active" ? status.headOffice : undefined
    return new BillingProfile({
      userId: user.id,
      name: `${user.firstName} ${user.lastName}`,
      companyName: user.companyName,
      address: {
        line1: office?.line1 ?? "",
        line2: null,
        postcode: office?.postcode ?? "",
        city: office?.city ?? "",
        country: "FR"
      },
      vatNumber: siren === undefined ? null : frenchVatNumber(siren),
      vatCheck: null,
      updatedAt: at
    })
  })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const viewBillingProfile = Effect.fn("viewBillingProfile")(function*(user: User) {
  const stored = yield* (yield* BillingProfiles).get(user.id)
  if (Option.isSome(stored)) return { profile: stored.value, saved: true } satisfies BillingProfileView
  return { profile: yield* prefill(user, yield* now), saved: false } satisfies BillingProfileView
})

const required = (field: string, value: string, max: number) => {
  const text = value.trim()
  if (text === "") return Effect.fail(new InvalidBillingProfile({ field, problem: "is required" }))
  if (text.length > max) return Effect.fail(new InvalidBillingProfile({ field, problem: `must be at most ${max} characters` }))
  return Effect.succeed(text)
}

const optional = (field: string, value: string | undefined, max: number) =>
  value === undefined || value.trim() === "" ? Effect.succeed(null) : required(field, value, max)

/** VIES's answer as evidence; an unreachable VIES is recorded too, so the number is checked again later. */
export const checkVatNumber = (vat: VatNumber, at: Date) =>
  Effect.flatMap(VatRegistry, (registry) => registry.check(vat)).pipe(
    Effect.map((check): VatCheckRecord => ({
      status: check.valid ? "valid" : "invalid",
      checkedAt: check.checkedAt,
      requestIdentifier: check.requestIdentifier,
      registeredName: check.registeredName,
      registeredAddress: check.registeredAddress
    })),
    Effect.catchTag("VatRegistryUnavailable", () =>
      Effect.succeed<VatCheckRecord>({
        status: "unavailable",
        checkedAt: at,
        requestIdentifier: null,
        registeredName: null,
        registeredAddress: null
      }))
  )

export const saveBillingProfile = Effect.fn("saveBillingProfile")(function*(user: User, input: BillingProfileInput) {
  const at = yield* now
  const country = input.address.country.trim().toUpperCase()
  if (!isCountryCode(country)) {
    return yield* new InvalidBillingProfile({ field: "address.country", problem: "must be an ISO 3166-1 alpha-2 country code such as FR" })
  }
  const postcode = yield* required("address.postcode", input.address.postcode, 16)
  if (country === "FR" && !/^\d{5}$/.test(postcode)) {
    return yield* new InvalidBillingProfile({ field: "address.postcode", problem: "must be 5 digits in France" })
  }
  const companyName = (yield* optional("companyName", input.companyName, 200)) ?? user.companyName
  if (user.accountType === "professional" && companyName === null) {
    return yield* new InvalidBillingProfile({ field: "companyName", problem: "is required for a professional account" })
  }
  const vat = input.vatNumber === undefined || input.vatNumber.trim() === ""
    ? null
    : parseVatNumber(input.vatNumber, country)
  if (vat === null && input.vatNumber !== undefined && input.vatNumber.trim() !== "") return yield* new InvalidVatNumber()
  if (vat !== null && companyName === null) {
    return yield* new InvalidBillingProfile({ field: "companyName", problem: "is required with a VAT number" })
  }
  const vatNumber = vat === null ? null : `${vat.countryCode}${vat.number}`
  const profiles = yield* BillingProfiles
  const previous = yield* profiles.get(user.id)
  // An unchanged number keeps its evidence unless VIES could not answer last time.
  const kept = Option.isSome(previous) && previous.value.vatNumber === vatNumber &&
      previous.value.vatCheck !== null && previous.value.vatCheck.status !== "unavailable"
    ? previous.value.vatCheck
    : null
  const profile = new BillingProfile({
    userId: user.id,
    name: yield* required("name", input.name, 200),
    companyName,
    address: {
      line1: yield* required("address.line1", input.address.line1, 200),
      line2: yield* optional("address.line2", input.address.line2, 200),
      postcode,
      city: yield* required("address.city", input.address.city, 100),
      country
    },
    vatNumber,
    vatCheck: vat === null ? null : kept ?? (yield* checkVatNumber(vat, at)),
    updatedAt: at
  })
  yield* profiles.save(profile)
  return profile
})

/** A number VIES could not check is checked again (before a quote): the answer replaces the stored evidence. */
export const recheckVatNumber = Effect.fn("recheckVatNumber")(function*(profile: BillingProfile) {
  if (profile.vatNumber === null || profile.vatCheck?.status !== "unavailable") return profile
  const vat = parseVatNumber(profile.vatNumber, profile.address.country)
  if (vat === null) return profile
  const vatCheck = yield* checkVatNumber(vat, yield* now)
  if (vatCheck.status === "unavailable") return profile
  const updated = new BillingProfile({ ...profile, vatCheck })
  yield* (yield* BillingProfiles).save(updated)
  return updated
})

/**
 * Before a sale: the customer's saved profile; a professional account without one gets its registry prefill saved
 * for it when the registry gave a complete head-office address (validated and its VAT number checked as if the
 * customer had saved it). Anyone else, or a prefill the registry could not complete, must fill it in first:
 * BillingProfileRequired, before anything is sold.
 */
export const billingProfileForSale = Effect.fn("billingProfileForSale")(function*(user: User) {
  const stored = yield* (yield* BillingProfiles).get(user.id)
  if (Option.isSome(stored)) return stored.value
  if (user.accountType !== "professional") return yield* new BillingProfileRequired()
  const prefilled = yield* prefill(user, yield* now)
  return yield* saveBillingProfile(user, {
    name: prefilled.name,
    companyName: prefilled.companyName ?? undefined,
    address: { ...prefilled.address, line2: prefilled.address.line2 ?? undefined },
    vatNumber: prefilled.vatNumber ?? undefined
  }).pipe(Effect.catchTags({
    InvalidBillingProfile: () => Effect.fail(new BillingProfileRequired()),
    InvalidVatNumber: () => Effect.fail(new BillingProfileRequired())
  }))
})
