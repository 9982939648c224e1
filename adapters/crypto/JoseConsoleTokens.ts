// Game console tokens as HS256 JWTs (jose) under a key of their own, derived from the session secret with HKDF:
// a session cookie cannot be replayed as a console token, nor the reverse (the `typ` header differs too).
import { Clock, Effect, Layer, Option, Redacted, Schema } from "effect"
import { jwtVerify, SignJWT } from "jose"
import { hkdfSync } from "node:crypto"
import { type ConsoleGrant, ConsoleTokens } from "../../ports/ConsoleTokens.ts"

const TYPE = "zh-console+jwt"

const Claims = Schema.Struct({ sub: Schema.String, sid: Schema.String, srv: Schema.String, exp: Schema.Int })
const decodeClaims = Schema.decodeUnknownOption(Claims)

export const make = (secret: Redacted.Redacted<Uint8Array>) => {
  const key = new Uint8Array(hkdfSync("sha256", Redacted.value(secret), new Uint8Array(0), "zh game console token", 32))
  return ConsoleTokens.of({
    issue: (grant: ConsoleGrant) =>
      Effect.promise(() =>
        new SignJWT({ sid: grant.sessionId, srv: grant.server })
          .setProtectedHeader({ alg: "HS256", typ: TYPE })
          .setSubject(grant.userId)
          .setExpirationTime(Math.floor(grant.expiresAt.getTime() / 1000))
          .sign(key)
      ),
    verify: (token) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const result = yield* Effect.promise(() =>
          jwtVerify(token, key, { algorithms: ["HS256"], typ: TYPE, currentDate: now }).then(
            (r) => Option.some(r.payload),
            () => Option.none()
          )
        )
        return Option.flatMap(result, (payload) =>
          Option.map(decodeClaims(payload), (c) => ({ userId: c.sub, sessionId: c.sid, server: c.srv, expiresAt: new Date(c.exp * 1000) })))
      })
  })
}

export const layer = (secret: Redacted.Redacted<Uint8Array>) => Layer.succeed(ConsoleTokens, make(secret))
