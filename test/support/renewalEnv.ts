// What the automatic renewal runs on in domain tests: in-memory renewals and payment customers, its settings (the
// production defaults unless a test says otherwise). The notices it sends: recordedNoticesLayer (recordedNotices.ts).
import { Duration, Layer } from "effect"
import * as MemoryPaymentCustomers from "../../adapters/fake/MemoryPaymentCustomers.ts"
import * as MemoryRenewals from "../../adapters/fake/MemoryRenewals.ts"
import { RenewalSettings } from "../../domain/billing/RenewalSettings.ts"

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
    Layer.succeed(RenewalSettings, testRenewalSettings(overrides))
  )
