// In-memory BillingProfiles: one per user, replaced whole by each save.
import { Effect, Layer, Option, Ref } from "effect"
import type { BillingProfile } from "../../domain/billing/invoicing/BillingProfile.ts"
import { BillingProfiles } from "../../ports/BillingProfiles.ts"

export const make = Effect.map(Ref.make(new Map<string, BillingProfile>()), (profiles) =>
  BillingProfiles.of({
    get: (userId) => Effect.map(Ref.get(profiles), (m) => Option.fromNullishOr(m.get(userId))),
    save: (profile) => Ref.update(profiles, (m) => new Map(m).set(profile.userId, profile))
  }))

export const layer = Layer.effect(BillingProfiles, make)
