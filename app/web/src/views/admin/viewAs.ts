// "View as customer": the customer's panel as they see it — subscriptions with their services, VPS, game servers,
// renewals in the panel's words, the latest invoices — under a banner, with no button, form or action link. The data
// comes from GET /api/admin/customers/:id/view-as (audited), never from a session of the customer's: nothing the
// operator's browser sends can act on the customer's account.
import { api, type ViewAs } from "../../api.ts"
import { link, type View } from "../../app.ts"
import { h } from "../../dom.ts"
import { formatDate, formatPrice, t } from "../../i18n.ts"
import { errorBox, loading, section, stateBadge } from "../../ui.ts"
import { renewalWords } from "../billing.ts"
import { cell, setAdminTitle, table } from "./parts.ts"
import { adminText } from "./texts.ts"

export const viewAsView: View = async ({ root, params, alive }) => {
  const id = params["id"] ?? ""
  const back = link(`/admin/customers/${encodeURIComponent(id)}`, adminText("admin.viewAs.back"))
  const errors = errorBox("admin-view-as-error")
  root.append(back, loading())
  let seen: ViewAs
  try {
    seen = await api.get<ViewAs>(`/api/admin/customers/${encodeURIComponent(id)}/view-as`)
  } catch (error) {
    if (!alive()) return
    setAdminTitle(adminText("admin.viewAs.open"))
    errors.show(error)
    root.replaceChildren(back, h("h1", {}, adminText("admin.viewAs.open")), errors.el)
    return
  }
  if (!alive()) return
  const c = seen.customer
  const name = `${c.firstName} ${c.lastName}`
  setAdminTitle(adminText("admin.viewAs.title", { name }))
  const plans = new Map(seen.renewals.map((r) => [r.subscriptionId, r.planName]))
  root.replaceChildren(
    back,
    h("div", { class: "warning-box view-as-banner", role: "note", "data-testid": "view-as-banner" },
      adminText("admin.viewAs.banner", { name, email: c.email })),
    h("h1", {}, adminText("admin.viewAs.title", { name })),
    h("div", { class: "stack", "data-testid": "view-as-panel" },
      section(t("dash.subscriptions"), "view-as-subscriptions",
        seen.subscriptions.length === 0
          ? h("p", { class: "muted" }, t("dash.noSubscriptions"))
          : table([t("sub.plan"), t("common.state"), t("sub.periodEnd")], seen.subscriptions.map((s) =>
            h("tr", { "data-testid": `view-as-subscription-${s.id}` },
              cell(t("sub.plan"), plans.get(s.id) ?? s.planId,
                s.service === undefined ? null : h("div", { class: "muted" }, s.service.address === "" ? s.service.name : `${s.service.name} · ${s.service.address}`)),
              cell(t("common.state"), stateBadge(s.status), s.cancelAtPeriodEnd ? h("div", { class: "muted" }, t("sub.endsAtPeriodEnd")) : null),
              cell(t("sub.periodEnd"), h("time", { datetime: s.currentPeriodEnd }, formatDate(s.currentPeriodEnd))))), "view-as-subscriptions-table")),
      section(t("dash.vps"), "view-as-vps",
        seen.vps.length === 0
          ? h("p", { class: "muted" }, t("dash.noVps"))
          : h("ul", { class: "service-list" }, seen.vps.map((v) =>
            h("li", { "data-testid": `view-as-vps-${v.id}` }, h("strong", {}, v.hostname), h("span", { class: "muted" }, ` ${v.address} `), stateBadge(v.status))))),
      section(t("dash.games"), "view-as-games",
        seen.gameServers.length === 0
          ? h("p", { class: "muted" }, t("dash.noGames"))
          : h("ul", { class: "service-list" }, seen.gameServers.map((g) =>
            h("li", { "data-testid": `view-as-game-${g.id}` }, h("strong", {}, g.name), h("span", { class: "muted" }, ` ${g.address} `), stateBadge(g.status))))),
      section(adminText("admin.viewAs.renewals"), "view-as-renewals",
        seen.renewals.length === 0
          ? h("p", { class: "muted" }, adminText("admin.viewAs.noRenewals"))
          : h("ul", { class: "service-list" }, seen.renewals.map((r) =>
            h("li", { "data-testid": `view-as-renewal-${r.subscriptionId}` }, h("strong", {}, r.planName), " — ", renewalWords(r))))),
      section(t("invoices.title"), "view-as-invoices",
        seen.invoices.length === 0
          ? h("p", { class: "muted" }, t("invoices.empty"))
          : table([t("invoices.number"), t("invoices.date"), t("invoices.total")], seen.invoices.map((i) =>
            h("tr", { "data-testid": `view-as-invoice-${i.id}` }, cell(t("invoices.number"), i.number),
              cell(t("invoices.date"), h("time", { datetime: i.issuedAt }, formatDate(i.issuedAt))),
              cell(t("invoices.total"), formatPrice(i.kind === "credit_note" ? -i.totalIncludingVatCents : i.totalIncludingVatCents)))), "view-as-invoices-table"))))
}
