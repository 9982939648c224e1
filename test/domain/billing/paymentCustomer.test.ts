// A user's customer at the payment provider is created once and remembered, even when asked for twice at once.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import * as MemoryPaymentCustomers from "../../../adapters/fake/MemoryPaymentCustomers.ts"
import * as StripePaymentGateway from "../../../adapters/stripe/StripePaymentGateway.ts"
import { sandboxStripe } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import { customerOf } from "../../../domain/billing/paymentCustomer.ts"
import { PaymentCustomers } from "../../../ports/PaymentCustomers.ts"

describe("customerOf", () => {
  it.effect("two first asks at once create one customer at the provider, then it is remembered", () =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxStripe()
      const gateway = StripePaymentGateway.layer({
        credentials: Effect.succeed(Option.some({ secretKey: Redacted.make(sandbox.secretKey), webhookSecrets: [] })),
        api: { host: sandbox.host, port: sandbox.port, protocol: "http" }
      })
      const user = { id: "4b1c0a52-0000-4000-8000-000000000001", email: "alice@example.test" }
      const [a, b] = yield* Effect.all([customerOf(user), customerOf(user)], { concurrency: 2 }).pipe(
        Effect.provide(Layer.merge(gateway, MemoryPaymentCustomers.layer))
      )
      assert.strictEqual(a, b)
      const created = (yield* sandbox.control.events).filter((e) => e.type === "customer.created")
      assert.strictEqual(created.length, 1)
    }))

  it.effect("a remembered customer is used without asking the provider", () =>
    Effect.gen(function*() {
      const customers = yield* PaymentCustomers
      yield* customers.remember("u-2", "cus_known", new Date(0))
      const gateway = StripePaymentGateway.layer({ credentials: Effect.succeed(Option.none()) })
      assert.strictEqual(yield* customerOf({ id: "u-2", email: "b@example.test" }).pipe(Effect.provide(gateway)), "cus_known")
    }).pipe(Effect.provide(MemoryPaymentCustomers.layer)))
})
