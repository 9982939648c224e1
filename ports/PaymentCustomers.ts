// Which customer of the payment provider each user is: created once at the provider, then remembered here.
import { Context, type Effect, type Option } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class PaymentCustomers extends Context.Service<PaymentCustomers, {
  get(userId: string): Effect.Effect<Option.Option<string>, DatabaseUnavailable>
  /** Remembers `customer` unless the user already has one; answers the one that holds. */
  remember(userId: string, customer: string, now: Date): Effect.Effect<string, DatabaseUnavailable>
}>()("zh/ports/PaymentCustomers") {}
