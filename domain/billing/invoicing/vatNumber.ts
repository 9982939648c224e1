// EU VAT numbers as customers type them: normalised, split into the VIES country code and the national part, and
// the French number a SIREN implies (reference/billing-fr.md §2).

/** The 27 member states by ISO 3166-1 alpha-2 (Greece is GR here; its VAT prefix is EL). */
export const EU_COUNTRIES: ReadonlySet<string> = new Set([
  "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT", "LT", "LU", "LV",
  "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK"
])

export const isEuCountry = (country: string): boolean => EU_COUNTRIES.has(country)

/** A VAT number split as VIES asks for it: `countryCode` is the VAT prefix (EL for Greece). */
export interface VatNumber {
  readonly countryCode: string
  readonly number: string
}

/** The VAT prefix of a member state: its ISO code, except Greece (EL). */
export const vatPrefixOf = (country: string): string => country === "GR" ? "EL" : country

/** `be 0123.456.749` → `BE0123456749`. */
export const normaliseVatNumber = (input: string): string => input.toUpperCase().replace(/[\s.\-_/]/g, "")

/**
 * A VAT number of the billing country, in the member state's general shape (2 to 12 letters or digits after the
 * prefix); VIES says whether it exists. Null when it is malformed or belongs to another country.
 */
export const parseVatNumber = (input: string, country: string): VatNumber | null => {
  const text = normaliseVatNumber(input)
  const prefix = vatPrefixOf(country)
  if (!isEuCountry(country) || !text.startsWith(prefix)) return null
  const number = text.slice(2)
  if (!/^[0-9A-Z+*]{2,12}$/.test(number)) return null
  if (country === "FR" && !isFrenchVatNumber(text)) return null
  return { countryCode: prefix, number }
}

export const formatVatNumber = (vat: VatNumber): string => `${vat.countryCode}${vat.number}`

/** The French key: (12 + 3 × (SIREN mod 97)) mod 97, on two digits. */
const frenchKey = (siren: string): string => String((12 + 3 * (Number(siren) % 97)) % 97).padStart(2, "0")

/** `FR` + key + SIREN: computable from a verified SIREN, printed as the customer's only once VIES confirms it. */
export const frenchVatNumber = (siren: string): string => {
  if (!/^\d{9}$/.test(siren)) throw new Error(`not a SIREN: ${siren}`)
  return `FR${frenchKey(siren)}${siren}`
}

/** A French number whose key is digits must match its SIREN; letter keys (older numbers) are left to VIES. */
const isFrenchVatNumber = (text: string): boolean => {
  const match = /^FR([0-9A-Z]{2})(\d{9})$/.exec(text)
  if (match === null) return false
  const [, key, siren] = match
  return !/^\d\d$/.test(key!) || key === frenchKey(siren!)
}
