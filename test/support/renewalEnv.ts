// What the automatic renewal runs on in domain tests: in-memory renewals and payment customers, its settings (the
// production defaults unless a test says otherwise), and the notices it sends, recorded (SentNotices reads them).
import { Context, Duration, Effect, Layer, Ref } from "effect"
import * as MemoryPaymentCustomers from "../../adapters/fake/MemoryPaymentCustomers.ts"
import * as MemoryRenewals from "../../adapters/fake/MemoryRenewals.ts"
import { RenewalSettings } from "../../domain/billing/RenewalSettings.ts"
import { type CustomerNotice, Notices } from "../../domain/notices/CustomerNotice.ts"

export class SentNotices extends Context.Service<SentNotices, Effect.Effect<ReadonlyArray<CustomerNotice>>>()("test/SentNotices") {}

/** A Notices recording every notice handed to it (duplicates included), and SentNotices to read them. */
export const recordedNoticesLayer = Layer.effectContext(Effect.map(
  Ref.make<ReadonlyArray<CustomerNotice>>([]),
  (sent) =>
    Context.make(Notices, Notices.of({ send: (notice) => Ref.update(sent, (all) => [...all, notice]) })).pipe(
      Context.add(SentNotices, Ref.get(sent))
    )
))

export const billingPageUrl = "https://panel.zh.test/billing"

export const testRenewalSettings = (overrides: Partial<RenewalSettings["Service"]> = {}): RenewalSettings["Service"] => ({
  ...RenewalSettings.defaults,
  gracePeriod: () => Duration.days(14),
  billingPageUrl,
  ...overrides
})

export const renewalEnv = (overrides: Partial<RenewalSettings["Service"]> = {}) =>
  Layer.mergeAll(
    MemoryRenewals.layer,
    MemoryPaymentCustomers.layer,
    Layer.succeed(RenewalSettings, testRenewalSettings(overrides)),
    recordedNoticesLayer
  )
