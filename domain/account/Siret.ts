// SIRET numbers: normalisation and checksum (reference/business-registry.md §2.3).
import { Result, Schema } from "effect"

const LA_POSTE_SIREN = "356000000"

/** Luhn over a string of digits: from the right, double every second digit. */
export const luhn = (digits: string): boolean => {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

const digitSum = (digits: string): number => {
  let sum = 0
  for (const c of digits) sum += Number(c)
  return sum
}

/**
 * La Poste has more establishments than Luhn-valid NICs, so its SIRETs are also valid when the
 * plain digit sum is a multiple of 5 — but its head office is an ordinary Luhn number, hence `||`.
 */
export const isValidSiret = (siret: string): boolean =>
  /^\d{14}$/.test(siret) &&
  luhn(siret.slice(0, 9)) &&
  (luhn(siret) || (siret.startsWith(LA_POSTE_SIREN) && digitSum(siret) % 5 === 0))

/** Users type SIRETs with spaces, dots or dashes (`552 081 317 66522`). */
export const normaliseSiret = (input: string): string => input.replace(/[\s.\-]/g, "")

export type SiretProblem = "SIRET_FORMAT" | "SIRET_CHECKSUM"

export const parseSiret = (input: string): Result.Result<Siret, SiretProblem> => {
  const digits = normaliseSiret(input)
  if (!/^\d{14}$/.test(digits)) return Result.fail("SIRET_FORMAT")
  if (!isValidSiret(digits)) return Result.fail("SIRET_CHECKSUM")
  return Result.succeed(Siret.make(digits))
}

export const Siret = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => isValidSiret(s) || "not a valid SIRET")),
  Schema.brand("Siret")
)
export type Siret = typeof Siret.Type
