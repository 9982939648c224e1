// Theme and language: read from the functional cookies (zh_theme, zh_pro_theme, zh_lang) on load, defaulting to
// the browser's preferences; saved through PUT /api/preferences, which sets those cookies.
import { api } from "./api.ts"
import { type Language, setLanguage } from "./i18n.ts"

export type Theme = "light" | "dark"

export const readCookie = (name: string): string | undefined => {
  for (const part of document.cookie.split(";")) {
    const [key, ...rest] = part.trim().split("=")
    if (key === name) return decodeURIComponent(rest.join("="))
  }
  return undefined
}

const asTheme = (v: string | undefined): Theme | undefined => (v === "light" || v === "dark" ? v : undefined)
const asLanguage = (v: string | undefined): Language | undefined => (v === "fr" || v === "en" ? v : undefined)

export const systemTheme = (): Theme => (window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light")
export const browserLanguage = (): Language => (/^fr\b/i.test(navigator.language ?? "") ? "fr" : "en")

export interface Preferences {
  readonly theme: Theme
  readonly proTheme: Theme
  readonly language: Language
  /** Whether each one was chosen (a cookie) rather than defaulted. */
  readonly explicit: { readonly theme: boolean; readonly proTheme: boolean; readonly language: boolean }
}

export const currentPreferences = (): Preferences => {
  const theme = asTheme(readCookie("zh_theme"))
  const proTheme = asTheme(readCookie("zh_pro_theme"))
  const language = asLanguage(readCookie("zh_lang"))
  return {
    theme: theme ?? systemTheme(),
    proTheme: proTheme ?? theme ?? systemTheme(),
    language: language ?? browserLanguage(),
    explicit: { theme: theme !== undefined, proTheme: proTheme !== undefined, language: language !== undefined }
  }
}

/** The professional area (a professional account's signed-in pages) has its own theme. */
export const applyPreferences = (professional: boolean, accountLanguage?: Language): void => {
  const prefs = currentPreferences()
  const theme = professional ? prefs.proTheme : prefs.theme
  document.documentElement.dataset["theme"] = theme
  document.documentElement.dataset["area"] = professional ? "pro" : "personal"
  setLanguage(prefs.explicit.language || accountLanguage === undefined ? prefs.language : accountLanguage)
}

export const effectiveTheme = (): Theme => (document.documentElement.dataset["theme"] === "dark" ? "dark" : "light")

export const savePreferences = (patch: { theme?: Theme; proTheme?: Theme; language?: Language }): Promise<void> =>
  api.put<void>("/api/preferences", patch, { anonymous: true })
