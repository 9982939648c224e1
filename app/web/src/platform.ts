// How the platform runs, read once from the server (GET /api/platform): in sandbox mode everything on sale is
// simulated, so the panel shows a demo banner and says payments are not taken.
import { api } from "./api.ts"
import { h } from "./dom.ts"
import { t } from "./i18n.ts"

let sandbox = false

/** Reads the platform's mode; a server that does not answer is taken as not a sandbox (no banner, no note). */
export const loadPlatform = async (): Promise<void> => {
  try {
    const answer = await api.get<{ sandbox?: unknown }>("/api/platform", { anonymous: true })
    sandbox = answer.sandbox === true
  } catch {
    sandbox = false
  }
}

export const isSandbox = (): boolean => sandbox

/** The banner above the header in sandbox mode, in the current language; null otherwise. */
export const demoBanner = (): HTMLElement | null =>
  sandbox
    ? h("div", { class: "demo-banner", role: "note", "data-testid": "demo-banner" },
      h("strong", {}, t("demo.title")), " ", t("demo.text"))
    : null
