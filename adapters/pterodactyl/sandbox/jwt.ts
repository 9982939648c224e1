// HS256 JSON Web Tokens as the panel issues them for Wings (reference/pterodactyl.md §3.1, §4.1): signed with the
// node's daemon secret, `jti` in both header and payload. Synchronous on purpose: the sandbox signs on the hot path.
import { createHmac, timingSafeEqual } from "node:crypto"

export type Claims = Readonly<Record<string, unknown>>

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url")

const signature = (input: string, secret: string) => createHmac("sha256", secret).update(input).digest("base64url")

export const signJwt = (claims: Claims, secret: string): string => {
  const header = { typ: "JWT", alg: "HS256", ...(typeof claims["jti"] === "string" ? { jti: claims["jti"] } : {}) }
  const input = `${b64(header)}.${b64(claims)}`
  return `${input}.${signature(input, secret)}`
}

/** The claims of a token signed with `secret`, or why it is refused (Wings' wording where it has one). */
export const verifyJwt = (token: string, secret: string): { readonly claims: Claims } | { readonly error: string } => {
  const parts = token.split(".")
  if (parts.length !== 3) return { error: "jwt: malformed token" }
  const [head = "", body = "", sig = ""] = parts
  const expected = Buffer.from(signature(`${head}.${body}`, secret))
  const given = Buffer.from(sig)
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { error: "jwt: HMAC verification failed" }
  try {
    const header: unknown = JSON.parse(Buffer.from(head, "base64url").toString("utf8"))
    const claims: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
    if (typeof header !== "object" || header === null || !("alg" in header) || header.alg !== "HS256") {
      return { error: "jwt: alg mismatch" }
    }
    if (typeof claims !== "object" || claims === null || Array.isArray(claims)) return { error: "jwt: malformed token" }
    return { claims: claims as Claims }
  } catch {
    return { error: "jwt: malformed token" }
  }
}

export const claimString = (claims: Claims, name: string): string | undefined => {
  const v = claims[name]
  return typeof v === "string" ? v : undefined
}

export const claimNumber = (claims: Claims, name: string): number | undefined => {
  const v = claims[name]
  return typeof v === "number" ? v : undefined
}
