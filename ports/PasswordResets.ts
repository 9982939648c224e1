// Single-use password reset tokens, stored only as SHA-256 digests.
import { Context, type Effect, Schema } from "effect"
import type { UserId } from "../domain/account/User.ts"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export class ResetNotRedeemable extends Schema.TaggedError<ResetNotRedeemable>()("ResetNotRedeemable", {
  reason: Schema.Literals(["UNKNOWN", "EXPIRED", "USED"])
}) {}

export class PasswordResets extends Context.Service<PasswordResets, {
  /** Stores a new token for the user and invalidates every older unused one, atomically. */
  issue(request: {
    readonly userId: UserId
    readonly tokenDigest: string
    readonly createdAt: Date
    readonly expiresAt: Date
  }): Effect.Effect<void, DatabaseUnavailable>
  /** Whether the token could be redeemed at `now` (its owner), without using it: a bogus token is refused cheaply. */
  check(tokenDigest: string, now: Date): Effect.Effect<UserId, ResetNotRedeemable | DatabaseUnavailable>
  /**
   * Marks the token used if it is unused and unexpired at `now`, in one conditional update, so two
   * concurrent redemptions cannot both win. Returns the owner.
   */
  redeem(tokenDigest: string, now: Date): Effect.Effect<UserId, ResetNotRedeemable | DatabaseUnavailable>
}>()("zh/ports/PasswordResets") {}
