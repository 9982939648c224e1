// The page for an address that leads nowhere, also what a customer is shown at a back-office address: nothing tells
// them the back-office exists.
import type { View } from "../app.ts"
import { h } from "../dom.ts"
import { t } from "../i18n.ts"

export const notFoundView: View = ({ root }) => {
  document.title = `${t("notFound.title")} · ${t("app.name")}`
  root.append(h("div", { class: "card", "data-testid": "not-found" }, h("h1", {}, t("notFound.title")), h("p", {}, t("notFound.text")),
    h("a", { href: "/" }, t("nav.dashboard"))))
}
