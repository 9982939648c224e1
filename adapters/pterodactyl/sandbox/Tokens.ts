// The JWTs the panel hands out for Wings (reference/pterodactyl.md §3.1, §4.1): console tokens and single-use signed
// URLs, signed per node, with a registry (never the tokens themselves) so tests can count them and a Wings "restart"
// can deny-list every token issued so far.
import { createHash, randomUUID } from "node:crypto"
import { claimNumber, claimString, type Claims, signJwt, verifyJwt } from "./jwt.ts"

export type TokenKind = "websocket" | "file-download" | "file-upload" | "backup-download"

export interface IssuedToken {
  readonly kind: TokenKind
  readonly serverUuid: string
  readonly uniqueId: string
  readonly issuedAt: number
  readonly expiresAt: number
}

export interface TokenContext {
  readonly panelUrl: string
  readonly nodeUrl: string
  readonly secret: string
  /** The simulation's clock, in epoch ms. */
  readonly now: () => number
}

export class Tokens {
  readonly issued: Array<IssuedToken> = []
  private readonly used = new Set<string>()
  private readonly denied = new Set<string>()

  issue(kind: TokenKind, ctx: TokenContext, serverUuid: string, ttlMs: number, claims: Claims): string {
    const now = ctx.now()
    const uniqueId = randomUUID()
    const seconds = Math.floor(now / 1000)
    this.issued.push({ kind, serverUuid, uniqueId, issuedAt: now, expiresAt: now + ttlMs })
    return signJwt({
      iss: ctx.panelUrl,
      aud: [ctx.nodeUrl],
      jti: createHash("md5").update(`${uniqueId}${serverUuid}`).digest("hex"),
      iat: seconds,
      nbf: seconds - 300,
      // Milliseconds would be truer to the option, but `exp` is seconds in every JWT; keep both for sub-second TTLs.
      exp: (now + ttlMs) / 1000,
      server_uuid: serverUuid,
      unique_id: uniqueId,
      ...claims
    }, ctx.secret)
  }

  /** Every token issued so far is refused from now on (Wings' boot-time denylist, §3.3). */
  denyAll(): void {
    for (const t of this.issued) this.denied.add(t.uniqueId)
  }

  /** Checks a console token; the `jwt error` text when it is refused. */
  checkConsole(token: string, ctx: TokenContext, serverUuid: string): { readonly claims: Claims } | { readonly error: string } {
    const verified = verifyJwt(token, ctx.secret)
    if ("error" in verified) return verified
    const problem = this.problem(verified.claims, ctx)
    if (problem !== undefined) return { error: problem }
    if (claimString(verified.claims, "server_uuid") !== serverUuid) return { error: "jwt: server uuid mismatch" }
    const permissions = verified.claims["permissions"]
    if (!Array.isArray(permissions) || !permissions.some((p) => p === "*" || p === "websocket.connect")) {
      return { error: "jwt: missing connect permission" }
    }
    return verified
  }

  /** Why an already-accepted console token is no longer valid (checked on every inbound message). */
  problem(claims: Claims, ctx: TokenContext): string | undefined {
    const aud = claims["aud"]
    if (!(Array.isArray(aud) ? aud.includes(ctx.nodeUrl) : aud === ctx.nodeUrl)) return "jwt: aud claim is invalid"
    const exp = claimNumber(claims, "exp")
    if (exp === undefined || exp * 1000 <= ctx.now()) return "jwt: exp claim is invalid"
    const uniqueId = claimString(claims, "unique_id")
    if (uniqueId === undefined || this.denied.has(uniqueId)) return "jwt: created too far in past (denylist)"
    return undefined
  }

  /** A signed URL's claims, consumed: `used` on a second use, `invalid` when forged or expired. */
  redeem(token: string, ctx: TokenContext): { readonly claims: Claims } | "used" | "invalid" {
    const verified = verifyJwt(token, ctx.secret)
    if ("error" in verified) return "invalid"
    const uniqueId = claimString(verified.claims, "unique_id")
    if (uniqueId === undefined) return "invalid"
    if (this.used.has(uniqueId)) return "used"
    if (this.problem(verified.claims, ctx) !== undefined) return "invalid"
    this.used.add(uniqueId)
    return verified
  }
}
