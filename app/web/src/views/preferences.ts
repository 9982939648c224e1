// Preferences: light/dark theme, the professional area's theme (professional accounts), French/English; saved
// through PUT /api/preferences (the zh_theme / zh_pro_theme / zh_lang cookies) and applied at once.
import { errorText } from "../api.ts"
import { announce, currentUser, refresh, setTitle, type View } from "../app.ts"
import { h } from "../dom.ts"
import { t } from "../i18n.ts"
import { applyPreferences, currentPreferences, savePreferences, type Theme } from "../prefs.ts"
import { errorBox, run } from "../ui.ts"
import { securityEventsSection } from "./securityEvents.ts"

const choice = (name: string, legend: string, options: ReadonlyArray<readonly [string, string]>, selected: string, hint?: string) =>
  h("fieldset", { class: "radios", "data-testid": `prefs-${name}` },
    h("legend", {}, legend),
    hint === undefined ? null : h("p", { class: "hint" }, hint),
    options.map(([value, label]) => {
      const id = `pref-${name}-${value}`
      return h("div", { class: "check" },
        h("input", { type: "radio", name, id, value, checked: value === selected, "data-testid": `prefs-${name}-${value}` }),
        h("label", { for: id }, label))
    }))

export const preferencesView: View = ({ root, user }) => {
  setTitle("prefs.title")
  const prefs = currentPreferences()
  const professional = user?.accountType === "professional"
  const themes: ReadonlyArray<readonly [Theme, string]> = [["light", t("prefs.light")], ["dark", t("prefs.dark")]]
  const errors = errorBox("prefs-error")
  const form = h("form", { class: "stack", "data-testid": "prefs-form" },
    choice("theme", t("prefs.theme"), themes, prefs.theme),
    professional ? choice("proTheme", t("prefs.proTheme"), themes, prefs.proTheme, t("prefs.proThemeHint")) : null,
    choice("language", t("prefs.language"), [["fr", "Français"], ["en", "English"]], document.documentElement.lang === "fr" ? "fr" : "en"),
    errors.el,
    h("button", { type: "submit", class: "primary", "data-testid": "prefs-save" }, t("common.save")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const data = new FormData(form)
    const theme = data.get("theme") as Theme
    const proTheme = (data.get("proTheme") ?? undefined) as Theme | undefined
    const language = data.get("language") as "fr" | "en"
    void run(form, async () => {
      await savePreferences({ theme, language, ...(proTheme === undefined ? {} : { proTheme }) })
      applyPreferences(currentUser()?.accountType === "professional")
      refresh()
      announce(t("prefs.saved"))
    }, { errors }).catch((e: unknown) => announce(errorText(e), "error"))
  })
  root.append(h("h1", {}, t("prefs.title")), h("div", { class: "card" }, form), securityEventsSection())
}
