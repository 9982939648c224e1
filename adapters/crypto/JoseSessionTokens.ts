// Session tokens as HS256 JWTs (jose). Verification accepts HS256 only, so "alg: none" or RS/HS confusion cannot pass.
import { Effect, Layer, Redacted, Schema } from "effect"
import { errors, jwtVerify, SignJWT } from "jose"
import { UserId } from "../../domain/account/User.ts"
import { type SessionClaims, SessionTokens, TokenRejected } from "../../ports/SessionTokens.ts"

const Claims = Schema.Struct({
  sub: UserId,
  sv: Schema.Int,
  rm: Schema.Boolean,
  sat: Schema.Int,
  exp: Schema.Int
})
const decodeClaims = Schema.decodeUnknownEffect(Claims)

/** A bounded map that forgets its oldest entry first. */
class Lru<V> {
  private readonly entries = new Map<string, V>()
  private readonly capacity: number
  constructor(capacity: number) {
    this.capacity = capacity
  }
  get(key: string): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }
  set(key: string, value: V) {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!)
  }
}

/**
 * jose signs and verifies through WebCrypto, which costs a thread hop per call (~0.2 ms each, measured). Both
 * are pure functions of their input, so they are memoised: the same claims in the same second give the same
 * token, and a token whose signature was checked once needs only its expiry checked again.
 */
export const make = (secret: Redacted.Redacted<Uint8Array>, options: { readonly cacheSize?: number } = {}) => {
  const key = Redacted.value(secret)
  const signed = new Lru<string>(options.cacheSize ?? 10_000)
  const verified = new Lru<SessionClaims>(options.cacheSize ?? 10_000)

  const sign = (claims: SessionClaims, iat: number) =>
    Effect.promise(() =>
      new SignJWT({ sv: claims.sessionVersion, rm: claims.rememberMe, sat: claims.signedInAt })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject(claims.userId)
        .setIssuedAt(iat)
        .setExpirationTime(claims.expiresAt)
        .sign(key)
    )

  const verifySignature = (token: string, now: Date) =>
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
      Effect.map((c): SessionClaims => ({
        userId: c.sub,
        sessionVersion: c.sv,
        rememberMe: c.rm,
        signedInAt: c.sat,
        expiresAt: c.exp
      })),
      Effect.catchTag("SchemaError", () => Effect.fail(new TokenRejected({ reason: "MALFORMED" })))
    )

  return SessionTokens.of({
    issue: (claims, now) => {
      const iat = Math.floor(now.getTime() / 1000)
      const cacheKey = `${claims.userId}|${claims.sessionVersion}|${claims.rememberMe}|${claims.signedInAt}|${claims.expiresAt}|${iat}`
      const cached = signed.get(cacheKey)
      if (cached !== undefined) return Effect.succeed(cached)
      return Effect.tap(sign(claims, iat), (token) => Effect.sync(() => signed.set(cacheKey, token)))
    },
    verify: (token, now) => {
      const cached = verified.get(token)
      if (cached !== undefined) {
        return cached.expiresAt > Math.floor(now.getTime() / 1000)
          ? Effect.succeed(cached)
          : Effect.fail(new TokenRejected({ reason: "EXPIRED" }))
      }
      return Effect.tap(verifySignature(token, now), (claims) => Effect.sync(() => verified.set(token, claims)))
    }
  })
}

export const layer = (secret: Redacted.Redacted<Uint8Array>) => Layer.succeed(SessionTokens, make(secret))
