// The account's security events on the preferences page: sign-ins, failed ones, password resets, "log out
// everywhere", consoles opened and operators' changes, newest first, from GET /api/account/security-events.
import { api, errorText, type SecurityEvent, type SecurityEventsPage } from "../api.ts"
import { h } from "../dom.ts"
import { formatDateTime, hasKey, t } from "../i18n.ts"
import { loading, section } from "../ui.ts"

const PAGE = 20

const actionText = (action: string) => {
  const key = `security.action.${action}`
  return hasKey(key) ? t(key) : action
}

const row = (e: SecurityEvent) =>
  h("tr", { "data-testid": "security-event", "data-action": e.action },
    h("td", {}, h("time", { datetime: e.at }, formatDateTime(e.at))),
    h("td", {}, actionText(e.action)),
    h("td", {}, t(`security.by.${e.by}`)),
    h("td", {}, e.address ?? "—"))

/** The section, filled as pages arrive; "more" reads the next page. */
export const securityEventsSection = (): HTMLElement => {
  const body = h("tbody", {})
  const status = loading()
  const more = h("button", { type: "button", class: "secondary", hidden: true, "data-testid": "security-more" }, t("security.more"))
  let next: string | undefined = undefined
  const load = async () => {
    more.hidden = true
    try {
      const query = `?limit=${PAGE}${next === undefined ? "" : `&before=${encodeURIComponent(next)}`}`
      const page = await api.get<SecurityEventsPage>(`/api/account/security-events${query}`)
      body.append(...page.events.map(row))
      next = page.next
      status.textContent = body.childElementCount === 0 ? t("security.none") : ""
      more.hidden = next === undefined
    } catch (error) {
      status.textContent = errorText(error)
    }
  }
  more.addEventListener("click", () => void load())
  void load()
  return section(t("security.title"), "security-events",
    h("p", { class: "hint" }, t("security.hint")),
    h("table", { class: "table" },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, t("security.when")),
        h("th", { scope: "col" }, t("security.what")),
        h("th", { scope: "col" }, t("security.who")),
        h("th", { scope: "col" }, t("security.from")))),
      body),
    status,
    more)
}
