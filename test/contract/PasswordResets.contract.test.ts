// One PasswordResets contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { createHash } from "node:crypto"
import * as MemoryPasswordResets from "../../adapters/fake/MemoryPasswordResets.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgPasswordResets from "../../adapters/postgres/PgPasswordResets.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import type { UserId } from "../../domain/account/User.ts"
import { PasswordResets } from "../../ports/PasswordResets.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { newUser } from "../support/userMother.ts"

/** The SHA-256 hex digest the service would store for a raw token. */
const digest = (token: string) => createHash("sha256").update(token).digest("hex")

const lifetime = 60 * 60 * 1000
const issuedAt = new Date("2026-03-01T10:00:00.000Z")
const expiresAt = new Date(issuedAt.getTime() + lifetime)
const beforeExpiry = new Date(issuedAt.getTime() + lifetime / 2)

/** Registers the owner through the Users port of the same backend (the Pg table references users). */
const owner = (email: string) => Effect.flatMap(Users, (users) => users.insert(newUser(email)))

const issue = (userId: UserId, token: string, createdAt: Date = issuedAt) =>
  Effect.flatMap(PasswordResets, (resets) =>
    resets.issue({
      userId,
      tokenDigest: digest(token),
      createdAt,
      expiresAt: new Date(createdAt.getTime() + lifetime)
    }))

const redeem = (token: string, now: Date = beforeExpiry) =>
  Effect.flatMap(PasswordResets, (resets) => resets.redeem(digest(token), now))

const reasonOf = (token: string, now?: Date) =>
  Effect.map(Effect.flip(redeem(token, now)), (error) => error._tag === "ResetNotRedeemable" ? error.reason : error._tag)

const contract = (name: string, impl: Layer.Layer<PasswordResets | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a redeemed token names its owner", () =>
      Effect.gen(function*() {
        const user = yield* owner("reset-owner@example.com")
        yield* issue(user.id, "token-owner")
        assert.strictEqual(yield* redeem("token-owner"), user.id)
      }))

    it.effect("check names the owner of a redeemable token without using it, and says why any other is not", () =>
      Effect.gen(function*() {
        const resets = yield* PasswordResets
        const user = yield* owner("reset-check@example.com")
        yield* issue(user.id, "token-check")
        const checkReason = (token: string, now: Date) =>
          Effect.map(Effect.flip(resets.check(digest(token), now)), (e) => e._tag === "ResetNotRedeemable" ? e.reason : e._tag)
        assert.strictEqual(yield* resets.check(digest("token-check"), beforeExpiry), user.id)
        assert.strictEqual(yield* resets.check(digest("token-check"), beforeExpiry), user.id)
        assert.strictEqual(yield* checkReason("token-check", expiresAt), "EXPIRED")
        assert.strictEqual(yield* checkReason("token-never-issued", beforeExpiry), "UNKNOWN")
        assert.strictEqual(yield* redeem("token-check"), user.id)
        assert.strictEqual(yield* checkReason("token-check", beforeExpiry), "USED")
        yield* issue(user.id, "token-check-older")
        yield* issue(user.id, "token-check-newer")
        assert.strictEqual(yield* checkReason("token-check-older", beforeExpiry), "UNKNOWN")
      }))

    it.effect("a token works only once", () =>
      Effect.gen(function*() {
        const user = yield* owner("reset-twice@example.com")
        yield* issue(user.id, "token-twice")
        yield* redeem("token-twice")
        assert.strictEqual(yield* reasonOf("token-twice"), "USED")
      }))

    it.effect("a token past its expiry is refused as expired, and stays redeemable before", () =>
      Effect.gen(function*() {
        const user = yield* owner("reset-expired@example.com")
        yield* issue(user.id, "token-expired")
        assert.strictEqual(yield* reasonOf("token-expired", new Date(expiresAt.getTime() + 1)), "EXPIRED")
        assert.strictEqual(yield* reasonOf("token-expired", expiresAt), "EXPIRED")
        assert.strictEqual(yield* redeem("token-expired", new Date(expiresAt.getTime() - 1)), user.id)
      }))

    it.effect("a digest that was never issued is unknown", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* reasonOf("token-never-issued"), "UNKNOWN")
      }))

    it.effect("issuing a newer token invalidates the user's older unused one, not another user's", () =>
      Effect.gen(function*() {
        const user = yield* owner("reset-newer@example.com")
        const other = yield* owner("reset-bystander@example.com")
        yield* issue(other.id, "token-bystander")
        yield* issue(user.id, "token-older")
        yield* issue(user.id, "token-newer", new Date(issuedAt.getTime() + 60_000))
        assert.strictEqual(yield* reasonOf("token-older"), "UNKNOWN")
        assert.strictEqual(yield* redeem("token-newer"), user.id)
        assert.strictEqual(yield* redeem("token-bystander"), other.id)
      }))

    it.effect("a used token stays used when the user asks for a new one", () =>
      Effect.gen(function*() {
        const user = yield* owner("reset-used-then-new@example.com")
        yield* issue(user.id, "token-first-used")
        yield* redeem("token-first-used")
        yield* issue(user.id, "token-second", new Date(issuedAt.getTime() + 60_000))
        assert.strictEqual(yield* reasonOf("token-first-used"), "USED")
        assert.strictEqual(yield* redeem("token-second"), user.id)
      }))

    it.effect("a reset token works once even when used ten times at the same time", () =>
      Effect.gen(function*() {
        const user = yield* owner("reset-race@example.com")
        yield* issue(user.id, "token-race")
        const results = yield* Effect.all(
          Array.from({ length: 10 }, () => Effect.result(redeem("token-race"))),
          { concurrency: "unbounded" }
        )
        const wins = results.filter(Result.isSuccess)
        assert.strictEqual(wins.length, 1)
        assert.strictEqual(wins[0]?.success, user.id)
        assert.deepStrictEqual(
          results.filter(Result.isFailure).map((r) => r.failure._tag === "ResetNotRedeemable" ? r.failure.reason : r.failure._tag),
          Array.from({ length: 9 }, () => "USED")
        )
      }))
  })

describe("PasswordResets contract", () => {
  contract("in memory", Layer.mergeAll(MemoryPasswordResets.layer, MemoryUsers.layer))
  for (const [backend, db] of sqlBackends()) {
    contract(backend, PgPasswordResets.layer.pipe(Layer.provideMerge(PgUsers.layer), Layer.provide(db)))
  }
})
