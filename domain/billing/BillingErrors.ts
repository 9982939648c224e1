// What can go wrong when ordering, renewing or cancelling.
import { Schema } from "effect"

export class PlanUnavailable extends Schema.TaggedError<PlanUnavailable>()("PlanUnavailable", { planId: Schema.String }) {
  override get message() {
    return `There is no plan "${this.planId}" for sale.`
  }
}

/** An operator took the plan off sale: it exists (subscriptions on it go on), but is not ordered now. */
export class PlanOffSale extends Schema.TaggedError<PlanOffSale>()("PlanOffSale", { planId: Schema.String }) {
  override get message() {
    return `The plan "${this.planId}" is not on sale at the moment; choose another plan.`
  }
}

export class InvalidOrderOption extends Schema.TaggedError<InvalidOrderOption>()("InvalidOrderOption", {
  field: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.field}: ${this.problem}`
  }
}

/** The product knows it has no room for this plan now (every server full): nothing was charged. */
export class SoldOut extends Schema.TaggedError<SoldOut>()("SoldOut", { planId: Schema.String }) {
  override get message() {
    return "No server has room for this plan right now. Nothing was charged; try again later or choose a smaller plan."
  }
}

export class OrderNotFound extends Schema.TaggedError<OrderNotFound>()("OrderNotFound", {}) {
  override get message() {
    return "No such order."
  }
}

export class SubscriptionNotFound extends Schema.TaggedError<SubscriptionNotFound>()("SubscriptionNotFound", {}) {
  override get message() {
    return "No such subscription."
  }
}

export class SubscriptionEnded extends Schema.TaggedError<SubscriptionEnded>()("SubscriptionEnded", {}) {
  override get message() {
    return "This subscription has ended; its service no longer exists. Place a new order instead."
  }
}

/**
 * What a product needed to check an order (its upstream) cannot answer now; nothing was charged. `code` and `busy`
 * (throttled: try again in a moment) are the product's, for the customer.
 */
export class ProductUnavailable extends Schema.TaggedError<ProductUnavailable>()("ProductUnavailable", {
  code: Schema.String,
  busy: Schema.Boolean,
  description: Schema.String,
  /** When busy: how long the upstream asked us to wait. */
  retryAfterSeconds: Schema.optionalKey(Schema.Int)
}) {
  override get message() {
    return this.description
  }
}

/** The customer has no card saved with the payment provider. */
export class PaymentMethodNotFound extends Schema.TaggedError<PaymentMethodNotFound>()("PaymentMethodNotFound", {}) {
  override get message() {
    return "No card is saved for this account."
  }
}

/**
 * A consumer's order without the express request to start before the withdrawal period ends: our services start at
 * once, so the law (Code de la consommation L221-25) wants that request collected; nothing was created or charged.
 */
export class ExpressStartConsentRequired
  extends Schema.TaggedError<ExpressStartConsentRequired>()("ExpressStartConsentRequired", {})
{
  override get message() {
    return "Tick the box asking for your service to start now, before the end of your 14-day withdrawal period " +
      "(expressStartConsent: true). You keep your right to withdraw; you would then pay only for the days used. " +
      "Nothing was charged."
  }
}

/** Withdrawal is a consumer's right: a professional account has none (it may cancel at the period's end). */
export class WithdrawalNotAvailable extends Schema.TaggedError<WithdrawalNotAvailable>()("WithdrawalNotAvailable", {}) {
  override get message() {
    return "The 14-day withdrawal right is a consumer's (Code de la consommation L221-18); professional accounts do " +
      "not have it. You may cancel the subscription: it then ends at the end of its paid period."
  }
}

/** The 14 days of the withdrawal period ended (at `endedAt`). */
export class WithdrawalPeriodOver extends Schema.TaggedError<WithdrawalPeriodOver>()("WithdrawalPeriodOver", {
  endedAt: Schema.Date
}) {
  override get message() {
    return `The 14-day withdrawal period of this contract ended on ${this.endedAt.toISOString()}. You may still ` +
      "cancel it: it then ends at the end of its paid period."
  }
}

/** The customer already withdrew from this contract (a second click, say): nothing more is done. */
export class AlreadyWithdrawn extends Schema.TaggedError<AlreadyWithdrawn>()("AlreadyWithdrawn", {}) {
  override get message() {
    return "You already withdrew from this contract; its refund is under way."
  }
}

/** The service is still being built: the withdrawal function opens as soon as it is ready (a few minutes). */
export class ServiceNotReady extends Schema.TaggedError<ServiceNotReady>()("ServiceNotReady", {}) {
  override get message() {
    return "Your service is still being set up: you can withdraw from this contract as soon as it is ready, in a few minutes."
  }
}

/** A product's upstream did not do what an operator asked of a service now (down, busy, refusing): try again. */
export class ServiceUpstreamUnavailable extends Schema.TaggedError<ServiceUpstreamUnavailable>()("ServiceUpstreamUnavailable", {
  kind: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The ${this.kind} platform did not answer (${this.detail}); nothing else changed, try again in a moment.`
  }
}
