// Session tokens: what is signed is a standard HS256 JWT (header, claims) that jose verifies, the same claims in the
// same second give the same token, a token is refused once expired even when its signature was checked before, and
// an expired token can still be read (which session it names) while a forged one cannot.
import { NodeCrypto } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { decodeProtectedHeader, jwtVerify } from "jose"
import * as JoseSessionTokens from "../../../adapters/crypto/JoseSessionTokens.ts"
import type { SessionClaims } from "../../../ports/SessionTokens.ts"
import { SessionId } from "../../../domain/account/SessionRecord.ts"
import { UserId } from "../../../domain/account/User.ts"

const key = new Uint8Array(32).fill(7)
/** Tokens signed with `bytes`, on node:crypto's HMAC as in the app. */
const tokensWith = (bytes: Uint8Array, options?: JoseSessionTokens.Options) =>
  JoseSessionTokens.make(Redacted.make(bytes), options).pipe(Effect.provide(NodeCrypto.layerMac))
const tokens = Effect.runSync(tokensWith(key))
const at = new Date("2026-01-01T10:00:00Z")
const seconds = Math.floor(at.getTime() / 1000)
const sessionId = (n: number) => SessionId.make(`5e551011-0000-4000-8000-${String(n).padStart(12, "0")}`)
const claims: SessionClaims = {
  sessionId: sessionId(3),
  userId: UserId.make("0b7c0d1e-1111-4222-8333-944455566677"),
  rememberMe: true,
  signedInAt: seconds - 60,
  expiresAt: seconds + 3600
}

describe("JoseSessionTokens", () => {
  it.effect("signs an HS256 JWT whose claims jose reads back", () =>
    Effect.gen(function*() {
      const token = yield* tokens.issue(claims, at)
      assert.deepStrictEqual(decodeProtectedHeader(token), { alg: "HS256", typ: "JWT" })
      const { payload } = yield* Effect.promise(() => jwtVerify(token, key, { algorithms: ["HS256"], currentDate: at }))
      assert.deepStrictEqual(payload, { sid: claims.sessionId, rm: true, sat: seconds - 60, sub: claims.userId, iat: seconds, exp: seconds + 3600 })
      assert.deepStrictEqual(yield* tokens.verify(token, at), claims)
    }))

  it.effect("gives the same token for the same claims in the same second, another in the next", () =>
    Effect.gen(function*() {
      const first = yield* tokens.issue(claims, at)
      assert.strictEqual(yield* tokens.issue(claims, new Date(at.getTime() + 999)), first)
      assert.notStrictEqual(yield* tokens.issue(claims, new Date(at.getTime() + 1000)), first)
    }))

  it.effect("refuses a token past its expiry even after it was verified once", () =>
    Effect.gen(function*() {
      const token = yield* tokens.issue(claims, at)
      yield* tokens.verify(token, at)
      const error = yield* Effect.flip(tokens.verify(token, new Date((claims.expiresAt + 1) * 1000)))
      assert.strictEqual(error.reason, "EXPIRED")
    }))

  it.effect("keeps working past its cache's capacity", () =>
    Effect.gen(function*() {
      const small = yield* tokensWith(key, { cacheSize: 4 })
      const issued: Array<string> = []
      for (let v = 0; v < 10; v++) issued.push(yield* small.issue({ ...claims, sessionId: sessionId(v) }, at))
      for (let v = 0; v < 10; v++) assert.strictEqual((yield* small.verify(issued[v]!, at)).sessionId, sessionId(v))
    }))

  it.effect("reads an expired token's claims (which session it names), never a forged one's", () =>
    Effect.gen(function*() {
      const token = yield* tokens.issue(claims, at)
      // A fresh instance: nothing memoised, the signature is checked again.
      const later = yield* tokensWith(key)
      assert.strictEqual((yield* Effect.flip(later.verify(token, new Date((claims.expiresAt + 60) * 1000)))).reason, "EXPIRED")
      assert.deepStrictEqual(yield* later.read(token), claims)
      const [header, payload, signature] = token.split(".")
      const altered = Buffer.from(Buffer.from(payload!, "base64url").toString("utf8").replace(claims.userId, "someone-else"))
      assert.strictEqual((yield* Effect.flip(later.read(`${header}.${altered.toString("base64url")}.${signature}`))).reason, "BAD_SIGNATURE")
      const foreign = yield* (yield* tokensWith(new Uint8Array(32).fill(8))).issue(claims, at)
      assert.strictEqual((yield* Effect.flip(later.read(foreign))).reason, "BAD_SIGNATURE")
      assert.strictEqual((yield* Effect.flip(later.read("garbage"))).reason, "MALFORMED")
    }))
})
