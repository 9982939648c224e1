// The panel's texts (app/web/src/i18n.ts) read outside a browser: the language switched with a stand-in `document`
// (setLanguage sets its `lang`), and set back to English with the real globals after each test.
import { afterEach, vi } from "vitest"
import { setLanguage } from "../../app/web/src/i18n.ts"

export const inLanguage = (lang: "fr" | "en"): void => {
  vi.stubGlobal("document", { documentElement: { lang: "" } })
  setLanguage(lang)
}

/** Call once at a test file's top level: English again, and the globals restored, after each test. */
export const restoreLanguageAfterEach = (): void => {
  afterEach(() => {
    setLanguage("en")
    vi.unstubAllGlobals()
  })
}
