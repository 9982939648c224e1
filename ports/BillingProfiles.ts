// The customers' billing profiles: one per user, replaced whole when edited.
import { Context, type Effect, type Option } from "effect"
import type { BillingProfile } from "../domain/billing/invoicing/BillingProfile.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class BillingProfiles extends Context.Service<BillingProfiles, {
  get(userId: string): Effect.Effect<Option.Option<BillingProfile>, DatabaseUnavailable>
  save(profile: BillingProfile): Effect.Effect<void, DatabaseUnavailable>
}>()("zh/ports/BillingProfiles") {}
