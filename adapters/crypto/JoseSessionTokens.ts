// Session tokens as HS256 JWTs (RFC 7519). Verification (jose) accepts HS256 only, so "alg: none" or RS/HS confusion
// cannot pass. Signing is node:crypto's HMAC, synchronous: every session check re-issues a token, and jose's
// WebCrypto would send each one to libuv's thread pool, where it queues behind password hashes during a login burst.
import { Buffer } from "node:buffer"
import { createHmac } from "node:crypto"
import { Effect, Layer, Redacted, Schema } from "effect"
import { compactVerify, errors, jwtVerify } from "jose"
import { SessionId } from "../../domain/account/SessionRecord.ts"
import { UserId } from "../../domain/account/User.ts"
import { type SessionClaims, SessionTokens, TokenRejected } from "../../ports/SessionTokens.ts"

const Claims = Schema.Struct({
  sid: SessionId,
  sub: UserId,
  rm: Schema.Boolean,
  sat: Schema.Int,
  exp: Schema.Int
})
const decodeClaims = Schema.decodeUnknownEffect(Claims)

/**
 * A bounded map that forgets the least recently used entries first, in halves: entries go to `young`; when it is
 * full it becomes `old` (the previous `old` is dropped), and a hit in `old` moves back to `young`. A hit costs one
 * or two lookups and no reordering (a Map kept in strict LRU order deletes and re-inserts on every hit).
 */
class Lru<V> {
  private young = new Map<string, V>()
  private old = new Map<string, V>()
  private readonly half: number
  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2))
  }
  get(key: string): V | undefined {
    const recent = this.young.get(key)
    if (recent !== undefined) return recent
    const older = this.old.get(key)
    if (older !== undefined) this.set(key, older)
    return older
  }
  set(key: string, value: V) {
    this.young.set(key, value)
    if (this.young.size >= this.half) {
      this.old = this.young
      this.young = new Map()
    }
  }
}

const base64url = (json: unknown) => Buffer.from(JSON.stringify(json), "utf8").toString("base64url")

/** The JOSE header of every token (RFC 7515 §4): the only algorithm verification accepts. */
const HEADER = base64url({ alg: "HS256", typ: "JWT" })

/**
 * jose verifies through WebCrypto, which costs a thread hop per call (~0.2 ms each, measured). Signing and
 * verifying are pure functions of their input, so both are memoised: the same claims in the same second give the
 * same token, and a token whose signature was checked once needs only its expiry checked again.
 */
export const make = (secret: Redacted.Redacted<Uint8Array>, options: { readonly cacheSize?: number } = {}) => {
  const key = Redacted.value(secret)
  const signed = new Lru<string>(options.cacheSize ?? 10_000)
  const verified = new Lru<SessionClaims>(options.cacheSize ?? 10_000)

  /** JWS compact serialisation (RFC 7515 §7.1) of the claims, HMAC-SHA-256 over `header.payload`. */
  const sign = (claims: SessionClaims, iat: number): string => {
    const payload = base64url({
      sid: claims.sessionId,
      rm: claims.rememberMe,
      sat: claims.signedInAt,
      sub: claims.userId,
      iat,
      exp: claims.expiresAt
    })
    const input = `${HEADER}.${payload}`
    return `${input}.${createHmac("sha256", key).update(input).digest("base64url")}`
  }

  const signedPayload = async (token: string): Promise<{ readonly payload: unknown }> => {
    const verified = await compactVerify(token, key, { algorithms: ["HS256"] })
    const payload: unknown = JSON.parse(new TextDecoder().decode(verified.payload))
    return { payload }
  }

  /** The signature and, given `now`, the expiry; without `now` (reading which session a token names) only the signature. */
  const verifySignature = (token: string, now: Date | undefined) =>
    Effect.tryPromise({
      try: () => (now === undefined ? signedPayload(token) : jwtVerify(token, key, { algorithms: ["HS256"], currentDate: now })),
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
        sessionId: c.sid,
        userId: c.sub,
        rememberMe: c.rm,
        signedInAt: c.sat,
        expiresAt: c.exp
      })),
      Effect.catchTag("SchemaError", () => Effect.fail(new TokenRejected({ reason: "MALFORMED" })))
    )

  return SessionTokens.of({
    issue: (claims, now) => {
      const iat = Math.floor(now.getTime() / 1000)
      const cacheKey = `${claims.sessionId}|${claims.userId}|${claims.rememberMe}|${claims.signedInAt}|${claims.expiresAt}|${iat}`
      const cached = signed.get(cacheKey)
      if (cached !== undefined) return Effect.succeed(cached)
      return Effect.sync(() => {
        const token = sign(claims, iat)
        signed.set(cacheKey, token)
        return token
      })
    },
    verify: (token, now) => {
      const cached = verified.get(token)
      if (cached !== undefined) {
        return cached.expiresAt > Math.floor(now.getTime() / 1000)
          ? Effect.succeed(cached)
          : Effect.fail(new TokenRejected({ reason: "EXPIRED" }))
      }
      return Effect.tap(verifySignature(token, now), (claims) => Effect.sync(() => verified.set(token, claims)))
    },
    read: (token) => {
      const cached = verified.get(token)
      return cached !== undefined ? Effect.succeed(cached) : verifySignature(token, undefined)
    }
  })
}

export const layer = (secret: Redacted.Redacted<Uint8Array>) => Layer.succeed(SessionTokens, make(secret))
