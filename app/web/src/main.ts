// The panel's entry point: applies the preferences, reads the session, draws the header and starts the router.
import { setUnauthenticatedHandler, type User } from "./api.ts"
import { currentUser, loadUser, navigate, refresh, route, setUser, start } from "./app.ts"
import { h } from "./dom.ts"
import { t } from "./i18n.ts"
import { applyPreferences, effectiveTheme, savePreferences } from "./prefs.ts"
import { announce } from "./app.ts"
import { errorText } from "./api.ts"
import { forgotView, loginView, logout, registerView, resetView } from "./views/auth.ts"
import { dashboardView } from "./views/dashboard.ts"
import { gameView } from "./views/game.ts"
import { orderFormView, orderProgressView, plansView } from "./views/order.ts"
import { demoBanner, loadPlatform } from "./platform.ts"
import { invoicesView } from "./views/invoices.ts"
import { billingView } from "./views/billing.ts"
import { preferencesView } from "./views/preferences.ts"
import { vpsView } from "./views/vps.ts"
import { legalFooter, legalView } from "./views/legal.ts"
import { notFoundView } from "./views/notFound.ts"
import { adminRoutes, isStaff } from "./views/admin/shell.ts"
import { adminText } from "./views/admin/texts.ts"

const isPro = (user: User | null) => user?.accountType === "professional"

/** The header's quick switches: theme (saved as zh_pro_theme in the professional area) and language. */
const toggleTheme = async () => {
  const next = effectiveTheme() === "dark" ? "light" : "dark"
  try {
    await savePreferences(isPro(currentUser()) ? { proTheme: next } : { theme: next })
    applyPreferences(isPro(currentUser()))
    refresh()
  } catch (error) {
    announce(errorText(error), "error")
  }
}

const toggleLanguage = async () => {
  const next = document.documentElement.lang === "fr" ? "en" : "fr"
  try {
    await savePreferences({ language: next })
    applyPreferences(isPro(currentUser()))
    refresh()
  } catch (error) {
    announce(errorText(error), "error")
  }
}

const header = (user: User | null): HTMLElement => {
  const dark = effectiveTheme() === "dark"
  const themeButton = h("button", { type: "button", class: "icon-button", "data-testid": "toggle-theme", "aria-pressed": String(dark),
    "aria-label": dark ? t("prefs.toggleThemeLight") : t("prefs.toggleTheme"), title: dark ? t("prefs.toggleThemeLight") : t("prefs.toggleTheme") },
    h("span", { "aria-hidden": "true" }, dark ? "☀" : "☾"))
  themeButton.addEventListener("click", () => void toggleTheme())
  const languageButton = h("button", { type: "button", class: "icon-button", "data-testid": "toggle-language", lang: document.documentElement.lang === "fr" ? "en" : "fr",
    "aria-label": t("prefs.switchLanguageLabel") }, t("prefs.switchLanguage"))
  languageButton.addEventListener("click", () => void toggleLanguage())
  const logoutButton = h("button", { type: "button", "data-testid": "logout" }, t("nav.logout"))
  logoutButton.addEventListener("click", () => void logout())
  const links = user === null
    ? [h("a", { href: "/order", "data-testid": "nav-order" }, t("nav.order")),
      h("a", { href: "/login", "data-testid": "nav-login" }, t("nav.login")), h("a", { href: "/register", "data-testid": "nav-register" }, t("nav.register"))]
    : [h("a", { href: "/", "data-testid": "nav-dashboard" }, t("nav.dashboard")), h("a", { href: "/order", "data-testid": "nav-order" }, t("nav.order")),
      h("a", { href: "/invoices", "data-testid": "nav-invoices" }, t("nav.invoices")),
      h("a", { href: "/billing", "data-testid": "nav-billing" }, t("nav.billing")),
      h("a", { href: "/preferences", "data-testid": "nav-preferences" }, t("nav.preferences")),
      isStaff(user) ? h("a", { href: "/admin", "data-testid": "nav-admin" }, adminText("admin.nav.title")) : null]
  const here = location.pathname
  for (const a of links) {
    const href = a?.getAttribute("href")
    if (href === here || href === "/admin" && here.startsWith("/admin/")) a?.setAttribute("aria-current", "page")
  }
  const bar = h("header", { class: "header" },
    h("a", { href: "/", class: "brand" }, t("app.name")),
    h("nav", { "aria-label": t("nav.main") }, h("ul", {}, links.map((a) => a === null ? null : h("li", {}, a)))),
    h("div", { class: "header-tools" }, languageButton, themeButton, user === null ? null : logoutButton))
  // Redrawn with the header, so the banner follows a language switch.
  const banner = demoBanner()
  return banner === null ? bar : h("div", {}, banner, bar)
}

const boot = async () => {
  applyPreferences(false)
  const [user] = await Promise.all([loadUser(), loadPlatform()])
  applyPreferences(isPro(user), user?.language)
  setUnauthenticatedHandler(() => {
    if (currentUser() === null) return
    setUser(null)
    applyPreferences(false)
    announce(t("err.SESSION_EXPIRED"), "error")
    navigate(`/login?next=${encodeURIComponent(location.pathname)}`, { replace: true })
  })
  start(document.getElementById("app")!, {
    user,
    header,
    footer: legalFooter,
    notFound: notFoundView,
    onUserChange: (u) => applyPreferences(isPro(u), u?.language),
    routes: [
      route("/login", loginView, "guest"),
      route("/register", registerView, "guest"),
      route("/forgot-password", forgotView, "any"),
      route("/reset-password", resetView, "any"),
      route("/", dashboardView, "user"),
      // The plans and their prices are public (a visitor compares before signing up); ordering one asks to sign in.
      route("/order", plansView, "any"),
      route("/order/:planId", orderFormView, "user"),
      route("/orders/:id", orderProgressView, "user"),
      route("/vps/:id", vpsView, "user"),
      route("/game/:id", gameView, "user"),
      route("/invoices", invoicesView, "user"),
      route("/billing", billingView, "user"),
      route("/preferences", preferencesView, "user"),
      route("/legal/:page", legalView, "any"),
      ...adminRoutes()
    ]
  })
}

void boot()
