// Session tokens as HS256 JWTs (RFC 7519). Verification (jose) accepts HS256 only, so "alg: none" or RS/HS confusion
// cannot pass. Signing is effect's `Mac` (HMAC-SHA-256), which the app runs on node:crypto's synchronous HMAC: every
// session check re-issues a token, and jose's WebCrypto would send each one to libuv's thread pool, where it queues
// behind password hashes during a login burst. Signed tokens and verified signatures are remembered in effect `Cache`s
// (the expiry is checked on every use), so a session's requests within a second cost one signature and one
// verification, not one each.
import { Cache, Duration, Effect, Exit, Layer, Redacted, Schema } from "effect"
import { Mac } from "effect/crypto"
import { compactVerify, errors } from "jose"
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
const decodeClaims = Schema.decodeUnknownEffect(Schema.fromJsonString(Claims))

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const base64url = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url")
const json64 = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url")

/** The JOSE header of every token (RFC 7515 §4): the only algorithm verification accepts. */
const HEADER = json64({ alg: "HS256", typ: "JWT" })

export interface Options {
  /** How many signed and verified tokens are remembered (the least recently used are forgotten first). */
  readonly cacheSize?: number
}

export const make = Effect.fn("JoseSessionTokens.make")(function*(secret: Redacted.Redacted<Uint8Array>, options: Options = {}) {
  const mac = yield* Mac.Mac
  const bytes = Redacted.value(secret)
  const key = yield* Effect.orDie(Mac.key(Mac.hmacSha256, bytes))

  /** The signature only: which claims a token carries, whatever its expiry. */
  const verifySignature = (token: string): Effect.Effect<SessionClaims, TokenRejected> =>
    Effect.tryPromise({
      try: () => compactVerify(token, bytes, { algorithms: ["HS256"] }),
      catch: (e) => new TokenRejected({ reason: e instanceof errors.JWSSignatureVerificationFailed ? "BAD_SIGNATURE" : "MALFORMED" })
    }).pipe(
      Effect.flatMap(({ payload }) => decodeClaims(decoder.decode(payload))),
      Effect.map((c): SessionClaims => ({ sessionId: c.sid, userId: c.sub, rememberMe: c.rm, signedInAt: c.sat, expiresAt: c.exp })),
      Effect.catchTag("SchemaError", () => Effect.fail(new TokenRejected({ reason: "MALFORMED" })))
    )

  // Only good signatures are kept: a flood of forged tokens cannot push the real ones out.
  const verified = yield* Cache.makeWith(verifySignature, {
    capacity: options.cacheSize ?? 10_000,
    timeToLive: (exit) => (Exit.isSuccess(exit) ? Duration.infinity : Duration.zero)
  })

  /** JWS compact serialisation (RFC 7515 §7.1): HMAC-SHA-256 over `header.payload`. */
  const sign = (claims: SessionClaims, iat: number) => {
    const payload = json64({ sid: claims.sessionId, rm: claims.rememberMe, sat: claims.signedInAt, sub: claims.userId, iat, exp: claims.expiresAt })
    const input = `${HEADER}.${payload}`
    return mac.sign(key, encoder.encode(input)).pipe(
      Effect.map((tag) => `${input}.${base64url(tag)}`),
      // A byte-backed HMAC key cannot fail to sign.
      Effect.orDie
    )
  }

  /**
   * Signing is a pure function of the claims and the second, and every request of a session within the same second
   * signs the same ones: the token is kept for that second (node:crypto's HMAC on a raw key costs tens of µs, a hit
   * a few). Keyed by the claims in a line, which is all the lookup needs.
   */
  const signed = yield* Cache.make({
    capacity: options.cacheSize ?? 10_000,
    timeToLive: "2 seconds",
    lookup: (line: string) => {
      const [sessionId, userId, rememberMe, signedInAt, expiresAt, iat] = line.split(" ")
      return sign({
        sessionId: SessionId.make(sessionId!),
        userId: UserId.make(userId!),
        rememberMe: rememberMe === "1",
        signedInAt: Number(signedInAt),
        expiresAt: Number(expiresAt)
      }, Number(iat))
    }
  })

  return SessionTokens.of({
    issue: (claims, now) =>
      Cache.get(
        signed,
        `${claims.sessionId} ${claims.userId} ${claims.rememberMe ? 1 : 0} ${claims.signedInAt} ${claims.expiresAt} ${Math.floor(now.getTime() / 1000)}`
      ),
    verify: (token, now) =>
      Effect.flatMap(Cache.get(verified, token), (claims) =>
        claims.expiresAt > Math.floor(now.getTime() / 1000) ? Effect.succeed(claims) : Effect.fail(new TokenRejected({ reason: "EXPIRED" }))),
    read: (token) => Cache.get(verified, token)
  })
})

/** Needs a `Mac`: NodeCrypto.layerMac in the app (node:crypto's synchronous HMAC). */
export const layer = (secret: Redacted.Redacted<Uint8Array>, options?: Options) =>
  Layer.effect(SessionTokens, make(secret, options))
