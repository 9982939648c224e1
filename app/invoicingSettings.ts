// The invoicing part of the settings: the seller (SELLER_FILE, a JSON file; the demo seller in sandbox mode) and the
// VAT rules (VAT_FRENCH_RATE, VAT_OSS_THRESHOLD_CENTS, VAT_RATES over the default table below).
import { Effect, Result, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { demoSeller, Seller } from "../domain/billing/invoicing/Seller.ts"
import type { VatRules } from "../domain/billing/invoicing/vatDecision.ts"
import { EU_COUNTRIES, frenchVatNumber } from "../domain/billing/invoicing/vatNumber.ts"
import { InvalidSetting } from "./InvalidSetting.ts"

/**
 * The standard rate of each member state but France, in percent, as published by the European Commission
 * ("VAT rates applied in the Member States", 2025 edition: EE 24 % from July 2025, RO 21 % from August 2025,
 * SK 23 % and FI 25.5 % from 2025). Rates change: the operator overrides any of them with VAT_RATES.
 */
export const DEFAULT_EU_RATES =
  "AT=20,BE=21,BG=20,CY=19,CZ=21,DE=19,DK=25,EE=24,ES=21,FI=25.5,GR=24,HR=25,HU=27,IE=23,IT=22,LT=21,LU=17,LV=21," +
  "MT=18,NL=21,PL=23,PT=23,RO=21,SE=25,SI=22,SK=23"

/** "20" or "5.5" → basis points; null when it is not a rate with at most two decimals below 100. */
export const basisPointsOf = (text: string): number | null => {
  const match = /^(\d{1,2})(?:\.(\d{1,2}))?$/.exec(text.trim())
  if (match === null) return null
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"))
}

const invalid = (name: string, problem: string) => Effect.fail(new InvalidSetting({ name, problem }))

export const resolveVatRules = (french: string, thresholdCents: number, overrides: string) =>
  Effect.gen(function*() {
    const frenchRate = basisPointsOf(french)
    if (frenchRate === null) return yield* invalid("VAT_FRENCH_RATE", "must be a percentage such as 20 or 5.5")
    const rates = new Map<string, number>()
    for (const [text, name] of [[DEFAULT_EU_RATES, "VAT_RATES"], [overrides, "VAT_RATES"]] as const) {
      for (const entry of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
        const [country = "", rate = ""] = entry.split("=")
        const basisPoints = basisPointsOf(rate)
        if (!EU_COUNTRIES.has(country) || country === "FR" || basisPoints === null) {
          return yield* invalid(name, `"${entry}" must be COUNTRY=RATE with another member state's code, such as DE=19`)
        }
        rates.set(country, basisPoints)
      }
    }
    return { frenchRateBasisPoints: frenchRate, ossThresholdCents: thresholdCents, memberStateRates: rates } satisfies VatRules
  })

const decodeSeller = Schema.decodeUnknownResult(Schema.fromJsonString(Seller))

/** The seller from its file, checked for consistency (SIRET of the SIREN, VAT number of the SIREN). */
export const parseSeller = (text: string): Result.Result<Seller, string> => {
  const decoded = decodeSeller(text)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure.message.split("\n")[0] ?? "is not a valid seller")
  const seller = decoded.success
  if (!seller.siret.startsWith(seller.siren)) return Result.fail("siret must start with the siren")
  if (seller.vatNumber !== frenchVatNumber(seller.siren)) {
    return Result.fail(`vatNumber must be the siren's French VAT number (${frenchVatNumber(seller.siren)})`)
  }
  return Result.succeed(seller)
}

export const readTextFile = (path: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => new InvalidSetting({ name: "SELLER_FILE", problem: `cannot be read: ${e instanceof Error ? e.message : String(e)}` })
  })

/** Production needs the real seller; sandbox mode falls back to the visibly fictitious demo one. */
export const resolveSeller = (
  file: string | undefined,
  sandbox: boolean,
  read: (path: string) => Effect.Effect<string, InvalidSetting> = readTextFile
) =>
  Effect.gen(function*() {
    if (file === undefined) {
      return sandbox ? demoSeller : yield* invalid("SELLER_FILE", "is required outside sandbox mode (the seller printed on invoices)")
    }
    const parsed = parseSeller(yield* read(file))
    return Result.isSuccess(parsed) ? parsed.success : yield* invalid("SELLER_FILE", parsed.failure)
  })
