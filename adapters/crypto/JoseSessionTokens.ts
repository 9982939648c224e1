// Session tokens as HS256 JWTs (jose). Verification accepts HS256 only, so "alg: none" or RS/HS confusion cannot pass.
import { Effect, Layer, Redacted, Schema } from "effect"
import { errors, jwtVerify, SignJWT } from "jose"
import { UserId } from "../../domain/account/User.ts"
import { SessionTokens, TokenRejected } from "../../ports/SessionTokens.ts"

const Claims = Schema.Struct({
  sub: UserId,
  sv: Schema.Int,
  rm: Schema.Boolean,
  sat: Schema.Int,
  exp: Schema.Int
})
const decodeClaims = Schema.decodeUnknownEffect(Claims)

export const make = (secret: Redacted.Redacted<Uint8Array>) => {
  const key = Redacted.value(secret)
  return SessionTokens.of({
    issue: (claims, now) =>
      Effect.promise(() =>
        new SignJWT({ sv: claims.sessionVersion, rm: claims.rememberMe, sat: claims.signedInAt })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setSubject(claims.userId)
          .setIssuedAt(Math.floor(now.getTime() / 1000))
          .setExpirationTime(claims.expiresAt)
          .sign(key)
      ),
    verify: (token, now) =>
      Effect.tryPromise({
        try: () => jwtVerify(token, key, { algorithms: ["HS256"], currentDate: now }),
        catch: (e) =>
          new TokenRejected({
            reason: e instanceof errors.JWTExpired
              ? "EXPIRED"
              : e instanceof errors.JWSSignatureVerificationFailed
              ? "BAD_SIGNATURE"
              : "MALFORMED"
          })
      }).pipe(
        Effect.flatMap(({ payload }) => decodeClaims(payload)),
        Effect.map((c) => ({ userId: c.sub, sessionVersion: c.sv, rememberMe: c.rm, signedInAt: c.sat, expiresAt: c.exp })),
        Effect.catchTag("SchemaError", () => Effect.fail(new TokenRejected({ reason: "MALFORMED" })))
      )
  })
}

export const layer = (secret: Redacted.Redacted<Uint8Array>) => Layer.succeed(SessionTokens, make(secret))
