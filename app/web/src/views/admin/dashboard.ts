// The back-office's dashboard (GET /api/admin/dashboard): revenue, today's orders, what waits (failed payments, open
// refunds), services by plan, the fill of IP pools and panel allocations, node capacity. A figure past its threshold
// is red and says so in words (never by colour alone).
import { api, type Dashboard } from "../../api.ts"
import type { View } from "../../app.ts"
import { h } from "../../dom.ts"
import { formatDateTime, formatMiB, formatPrice } from "../../i18n.ts"
import { errorBox, loading, section } from "../../ui.ts"
import { cell, setAdminTitle, table } from "./parts.ts"
import { adminText, kindName } from "./texts.ts"

/** The marker of a figure past its threshold: red, and a word for those who do not see the colour. */
const flagged = (alert: boolean, testid: string, ...content: Array<Node | string>) =>
  h("span", { class: alert ? "figure figure-alert" : "figure", "data-testid": testid, "data-alert": String(alert) },
    ...content, alert ? h("span", { class: "figure-flag" }, ` ⚠ ${adminText("admin.dash.alert")}`) : null)

const tile = (label: string, value: HTMLElement | string, hint?: string) =>
  h("div", { class: "tile" }, h("div", { class: "tile-label" }, label), h("div", { class: "tile-value" }, value),
    hint === undefined ? null : h("div", { class: "hint" }, hint))

const of = (used: string | number, total: string | number) => adminText("admin.dash.of", { used, total })

export const adminDashboardView: View = async ({ root, alive }) => {
  setAdminTitle(adminText("admin.dash.title"))
  const errors = errorBox("admin-dashboard-error")
  const body = h("div", { class: "stack" }, loading())
  root.append(h("h1", {}, adminText("admin.dash.title")), errors.el, body)
  let d: Dashboard
  try {
    d = await api.get<Dashboard>("/api/admin/dashboard")
  } catch (error) {
    if (!alive()) return
    body.replaceChildren()
    errors.show(error)
    return
  }
  if (!alive()) return
  const th = d.thresholds
  body.replaceChildren(
    h("p", { class: "muted" }, adminText("admin.dash.day", { start: formatDateTime(d.day.start), end: formatDateTime(d.day.end) })),
    section(adminText("admin.dash.money"), "admin-dash-money", h("div", { class: "tiles" },
      tile(adminText("admin.dash.mrr"), h("span", { "data-testid": "admin-dash-mrr" }, formatPrice(d.mrr.excludingVatCents)),
        adminText("admin.dash.mrrHint", { count: d.mrr.activeSubscriptions })),
      tile(adminText("admin.dash.mrrTtc"), h("span", { "data-testid": "admin-dash-mrr-ttc" }, formatPrice(d.mrr.lastInvoicedIncludingVatCents)),
        adminText("admin.dash.mrrTtcHint", { invoiced: d.mrr.invoicedSubscriptions, count: d.mrr.activeSubscriptions })))),
    section(adminText("admin.dash.activity"), "admin-dash-activity", h("div", { class: "tiles" },
      tile(adminText("admin.dash.ordersToday"), h("span", { "data-testid": "admin-dash-orders" }, String(d.orders.placed))),
      tile(adminText("admin.dash.failedOrders", { max: th.failedOrdersMax }), flagged(d.orders.alert, "admin-dash-failed-orders", String(d.orders.failed))),
      tile(adminText("admin.dash.failedPayments", { max: th.failedPaymentsMax }),
        flagged(d.failedPayments.alert, "admin-dash-failed-payments", String(d.failedPayments.retrying + d.failedPayments.awaitingAuthentication)),
        adminText("admin.dash.failedPaymentsHint", {
          retrying: d.failedPayments.retrying, awaiting: d.failedPayments.awaitingAuthentication, amount: formatPrice(d.failedPayments.amountCents)
        })),
      tile(adminText("admin.dash.openRefunds", { max: th.openRefundsMax }), flagged(d.openRefunds.alert, "admin-dash-open-refunds", String(d.openRefunds.requests + d.openRefunds.orders)),
        adminText("admin.dash.openRefundsHint", {
          requests: d.openRefunds.requests,
          amount: formatPrice(d.openRefunds.requestedCents),
          orders: d.openRefunds.orders,
          since: d.openRefunds.oldestSince === null ? adminText("admin.common.none") : formatDateTime(d.openRefunds.oldestSince)
        })))),
    section(adminText("admin.dash.services"), "admin-dash-services",
      d.services.length === 0
        ? h("p", { class: "muted" }, adminText("admin.dash.noServices"))
        : table([adminText("admin.dash.kind"), adminText("admin.dash.plan"), adminText("admin.dash.active"), adminText("admin.dash.suspended")],
          d.services.map((s) => h("tr", { "data-testid": `admin-dash-service-${s.planId}` },
            cell(adminText("admin.dash.kind"), kindName(s.kind)), cell(adminText("admin.dash.plan"), s.planName ?? s.planId),
            cell(adminText("admin.dash.active"), String(s.active)), cell(adminText("admin.dash.suspended"), String(s.suspended)))), "admin-dash-services-table")),
    section(adminText("admin.dash.pools", { min: th.poolFreeMinPercent }), "admin-dash-pools",
      table([adminText("admin.dash.pool"), adminText("admin.dash.used"), adminText("admin.dash.free")], d.pools.map((p) =>
        h("tr", {}, cell(adminText("admin.dash.pool"), `${p.id} (${p.cluster})`), cell(adminText("admin.dash.used"), String(p.assigned)),
          cell(adminText("admin.dash.free"), flagged(p.alert, `admin-dash-pool-${p.id}`, String(p.free))))), "admin-dash-pools-table")),
    section(adminText("admin.dash.allocations", { min: th.allocationsFreeMinPercent }), "admin-dash-allocations",
      table([adminText("admin.dash.panel"), adminText("admin.dash.used"), adminText("admin.dash.free")], d.allocations.map((a) =>
        h("tr", {}, cell(adminText("admin.dash.panel"), a.panel), cell(adminText("admin.dash.used"), String(a.held)),
          cell(adminText("admin.dash.free"), flagged(a.alert, `admin-dash-allocations-${a.panel}`,
            a.free === null ? adminText("admin.dash.unavailable") : String(a.free))))), "admin-dash-allocations-table")),
    section(adminText("admin.dash.nodes", { max: th.nodeCommitMaxPercent }), "admin-dash-nodes",
      table([adminText("admin.dash.node"), adminText("admin.dash.cpu"), adminText("admin.dash.memory"), adminText("admin.dash.disk")], d.nodes.map((n) =>
        h("tr", {},
          cell(adminText("admin.dash.node"), flagged(n.alert, `admin-dash-node-${n.cluster}-${n.node}`, `${n.cluster} / ${n.node}`),
            h("div", { class: "muted" }, n.online === null ? adminText("admin.dash.unavailable") : adminText(n.online ? "admin.dash.online" : "admin.dash.offline"))),
          cell(adminText("admin.dash.cpu"), of(n.committed.vcpus, n.available?.vcpus ?? "?")),
          cell(adminText("admin.dash.memory"), of(formatMiB(n.committed.memoryMiB), n.available === null ? "?" : formatMiB(n.available.memoryMiB))),
          cell(adminText("admin.dash.disk"), of(formatMiB(n.committed.diskGiB * 1024), n.available === null ? "?" : formatMiB(n.available.diskGiB * 1024))))),
      "admin-dash-nodes-table")))
}
