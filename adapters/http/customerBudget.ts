// Each customer's share of an upstream's budget: every customer is served through the same Pterodactyl client key (one
// per-minute limit for all of them) and the same Proxmox API, so each customer gets a token bucket per upstream —
// CUSTOMER_UPSTREAM_RATE_PER_MINUTE calls at once, refilled at that rate a minute, hence at most twice it in any
// minute. Past it the customer gets 429 RATE_LIMITED with Retry-After, and the others never notice.
// The buckets are effect/persistence's RateLimiter on its in-memory store: one process's count (see README).
import { Context, Data, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"

/** Which shared budget a call spends: the game panel's Client API, or the Proxmox clusters' API. */
export type Upstream = "game-panel" | "proxmox"

/** A customer's share of an upstream is spent; `retryAfterSeconds` until the next call is allowed. */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{ readonly retryAfterSeconds: number }> {
  override get message() {
    return `You are sending requests faster than your share of the platform allows; try again in ${this.retryAfterSeconds} s.`
  }
}

export class CustomerBudgets extends Context.Service<CustomerBudgets, {
  readonly perMinute: number
  /** Spends one call of `upstream` for `userId`, or fails when the customer's share is used up. */
  spend(userId: string, upstream: Upstream): Effect.Effect<void, BudgetExceeded>
}>()("zh/http/CustomerBudgets") {
  static readonly layer = (perMinute: number): Layer.Layer<CustomerBudgets, never, RateLimiter.RateLimiter> =>
    Layer.effect(CustomerBudgets, Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      return CustomerBudgets.of({
        perMinute,
        spend: (userId, upstream) =>
          limiter.consume({ algorithm: "token-bucket", onExceeded: "fail", window: "1 minute", limit: perMinute, key: `${upstream}:${userId}` })
            .pipe(
              Effect.asVoid,
              Effect.catch((e) =>
                e.reason._tag === "RateLimitExceeded"
                  ? Effect.fail(new BudgetExceeded({ retryAfterSeconds: Math.max(1, Math.ceil(Duration.toSeconds(e.reason.retryAfter))) }))
                  // A store that cannot count lets the call through: the upstream's own limit still stands behind it.
                  : Effect.logWarning("customer budget store failed", e.reason.message)
              )
            )
      })
    }))

  /** On one process's memory (the buckets are lost with it, and each instance counts its own). */
  static readonly layerMemory = (perMinute: number): Layer.Layer<CustomerBudgets> =>
    CustomerBudgets.layer(perMinute).pipe(Layer.provide(RateLimiter.layer), Layer.provide(RateLimiter.layerStoreMemory))
}
