// What a customer chooses when ordering a VPS: OS template, hostname, SSH public key — validated here.
import { Effect, Schema } from "effect"
import { Catalog } from "../../ports/Catalog.ts"
import { InvalidOrderOption } from "../billing/BillingErrors.ts"
import type { VpsPlan } from "../catalog/Plan.ts"

/** RFC 1123 host name: labels of letters, digits and inner hyphens, at most 253 characters in all. */
export const isValidHostname = (name: string): boolean =>
  name.length <= 253 &&
  name.split(".").every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(label))

const KEY_TYPES = new Set([
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com"
])

const fromBase64 = (text: string): Uint8Array | undefined => {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined
  const binary = atob(text)
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

/**
 * An OpenSSH public key line: `<type> <base64 blob> [comment]`, where the blob starts with the same type as a
 * length-prefixed string (RFC 4253 §6.6) — so a truncated or mismatched paste is caught here, not at first login.
 */
export const checkSshPublicKey = (line: string): string | undefined => {
  const parts = line.trim().split(/\s+/)
  const [type, blob] = parts
  if (type === undefined || blob === undefined) return "must look like `ssh-ed25519 AAAA… comment`"
  if (!KEY_TYPES.has(type)) return `key type "${type}" is not supported`
  const bytes = fromBase64(blob)
  if (bytes === undefined || bytes.length < 4 + type.length) return "the key data is not valid base64"
  const length = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0
  const embedded = new TextDecoder().decode(bytes.subarray(4, 4 + length))
  if (embedded !== type) return "the key data does not match its type (truncated or altered?)"
  if (type === "ssh-rsa" && bytes.length < 200) return "RSA keys must be at least 2048 bits"
  return undefined
}

/** The key line as OpenSSH writes it: single spaces between type, data and comment. */
export const normaliseSshPublicKey = (line: string): string => line.trim().split(/\s+/).join(" ")

export const VpsOrderOptions = Schema.Struct({
  templateId: Schema.String.check(Schema.isMaxLength(64)),
  hostname: Schema.String.check(Schema.isMaxLength(253)),
  sshPublicKey: Schema.String.check(Schema.isMaxLength(16 * 1024))
})
export type VpsOrderOptions = typeof VpsOrderOptions.Type

/** The options decoded and checked against the plan and the catalog, normalised as they are stored. */
export const validateVpsOptions = Effect.fn("validateVpsOptions")(function*(plan: VpsPlan, raw: unknown) {
  const options = yield* Schema.decodeUnknownEffect(VpsOrderOptions)(raw).pipe(
    Effect.mapError((e) => new InvalidOrderOption({ field: "options", problem: e.message.split("\n")[0] ?? e.message }))
  )
  if (!plan.templates.includes(options.templateId)) {
    return yield* new InvalidOrderOption({ field: "options.templateId", problem: "this plan does not offer that OS template" })
  }
  if ((yield* (yield* Catalog).templates(options.templateId)).length === 0) {
    return yield* new InvalidOrderOption({ field: "options.templateId", problem: "that OS template is no longer offered" })
  }
  const hostname = options.hostname.trim().toLowerCase()
  if (!isValidHostname(hostname)) {
    return yield* new InvalidOrderOption({
      field: "options.hostname",
      problem: "letters, digits and hyphens, in labels of at most 63 characters separated by dots"
    })
  }
  const keyProblem = checkSshPublicKey(options.sshPublicKey)
  if (keyProblem !== undefined) return yield* new InvalidOrderOption({ field: "options.sshPublicKey", problem: keyProblem })
  return { templateId: options.templateId, hostname, sshPublicKey: normaliseSshPublicKey(options.sshPublicKey) }
})
