// The one layout of every e-mail we send (the password reset, the customer notices): the same parts as plain text and
// as HTML, every piece of text escaped in the HTML; and how amounts and dates read in each language.
import type { Language } from "../account/User.ts"

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** What a message says, in order; every string is plain text (the layout escapes it for HTML). */
export interface MailParts {
  readonly greeting: string
  readonly paragraphs: ReadonlyArray<string>
  /** Label and value lines ("Amount: €9.99"), shown as a list. */
  readonly facts?: ReadonlyArray<readonly [string, string]>
  /** One link to act on. */
  readonly action?: { readonly label: string; readonly url: string }
  /** Smaller print after the action. */
  readonly notes?: ReadonlyArray<string>
  readonly signature: string
}

export const layoutMail = (language: Language, parts: MailParts): { readonly text: string; readonly html: string } => {
  const facts = parts.facts ?? []
  const notes = parts.notes ?? []
  const separator = language === "fr" ? " : " : ": "
  const text = [
    parts.greeting,
    "",
    parts.paragraphs.join("\n\n"),
    ...(facts.length === 0 ? [] : ["", ...facts.map(([label, value]) => `${label}${separator}${value}`)]),
    ...(parts.action === undefined ? [] : [`${parts.action.label}${separator}${parts.action.url}`]),
    ...(notes.length === 0 ? [] : ["", ...notes]),
    "",
    parts.signature
  ].join("\n")
  const html = [
    "<!doctype html>",
    `<html lang="${language}"><body style="font-family:sans-serif;line-height:1.5">`,
    `<p>${escapeHtml(parts.greeting)}</p>`,
    ...parts.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(facts.length === 0 ? [] : [
      `<ul>${facts.map(([label, value]) => `<li>${escapeHtml(label)}${escapeHtml(separator)}<b>${escapeHtml(value)}</b></li>`).join("")}</ul>`
    ]),
    ...(parts.action === undefined
      ? []
      : [`<p><a href="${escapeHtml(parts.action.url)}">${escapeHtml(parts.action.label)}</a></p>`]),
    ...(notes.length === 0
      ? []
      : [`<p style="font-size:0.9em;color:#555">${notes.map(escapeHtml).join("<br>")}</p>`]),
    `<p>${escapeHtml(parts.signature)}</p>`,
    "</body></html>"
  ].join("\n")
  return { text, html }
}

/** Thousands grouped by `separator`, from integer digits only (money never goes through a float). */
const group = (whole: number, separator: string) => String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, separator)

/** Integer cents as euros: "1 234,56 €" in French (narrow no-break spaces, no-break space before €), "€1,234.56" in English. */
export const formatEuros = (cents: number, language: Language): string => {
  const sign = cents < 0 ? "-" : ""
  const abs = Math.abs(cents)
  const whole = Math.floor(abs / 100)
  const fraction = String(abs % 100).padStart(2, "0")
  return language === "fr" ? `${sign}${group(whole, "\u202f")},${fraction}\u00a0€` : `${sign}€${group(whole, ",")}.${fraction}`
}

const dateFormats = {
  fr: new Intl.DateTimeFormat("fr-FR", { timeZone: "Europe/Paris", dateStyle: "long", timeStyle: "short" }),
  en: new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Paris", dateStyle: "long", timeStyle: "short" })
}
const dayFormats = {
  fr: new Intl.DateTimeFormat("fr-FR", { timeZone: "Europe/Paris", dateStyle: "long" }),
  en: new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Paris", dateStyle: "long" })
}

/** A moment as a customer in France reads it: "3 décembre 2026 à 14:05 (heure de Paris)", "3 December 2026 at 14:05 (Paris time)". */
export const formatMoment = (date: Date, language: Language): string =>
  `${dateFormats[language].format(date)} ${language === "fr" ? "(heure de Paris)" : "(Paris time)"}`

/** A day, in Paris: "3 décembre 2026", "3 December 2026". */
export const formatDay = (date: Date, language: Language): string => dayFormats[language].format(date)
