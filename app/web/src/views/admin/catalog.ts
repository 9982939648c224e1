// The back-office's catalog: plans (with putting one on or off sale, for an admin), OS templates, IP pools with
// their fill level, clusters and panels, as the catalog file made them (GET /api/admin/catalog).
import { type AdminCatalog, type AdminPlan, api, type PlanSale } from "../../api.ts"
import type { View } from "../../app.ts"
import { h } from "../../dom.ts"
import { formatMiB, formatPrice } from "../../i18n.ts"
import { confirmDialog, errorBox, loading, run, section } from "../../ui.ts"
import { cell, setAdminTitle, table } from "./parts.ts"
import { adminText, kindName } from "./texts.ts"

const stateText = (retired: boolean) => adminText(retired ? "admin.catalog.retired" : "admin.catalog.active")

const resources = (plan: AdminPlan) =>
  plan.kind === "vps"
    ? adminText("admin.catalog.vpsResources", { vcpu: plan.vcpu ?? 0, ram: formatMiB(plan.ramMiB ?? 0), disk: formatMiB((plan.diskGiB ?? 0) * 1024) })
    : adminText("admin.catalog.gameResources", {
      memory: formatMiB(plan.memoryMiB ?? 0), disk: formatMiB(plan.diskMiB ?? 0), cpu: plan.cpuPercent ?? 0, panel: plan.panel ?? ""
    })

const saleBadge = (plan: AdminPlan) =>
  h("span", { class: `badge ${plan.onSale ? "badge-active" : "badge-suspended"}`, "data-testid": `admin-plan-sale-${plan.id}`, "data-on-sale": String(plan.onSale) },
    adminText(plan.onSale ? "admin.catalog.onSale" : "admin.catalog.offSale"))

/** A plan's row; for an admin, the button that puts it on or off sale (off asks first). */
const planRow = (initial: AdminPlan, mayChange: boolean): HTMLElement => {
  let plan = initial
  const saleCell = cell(adminText("admin.catalog.sale"))
  const row = h("tr", { "data-testid": `admin-plan-${plan.id}` },
    cell(adminText("admin.catalog.plan"), h("strong", {}, plan.name), h("div", { class: "muted" }, plan.id)),
    cell(adminText("admin.catalog.kind"), kindName(plan.kind)),
    cell(adminText("admin.catalog.price"), formatPrice(plan.priceCents)),
    cell(adminText("admin.catalog.resources"), resources(plan)),
    cell(adminText("admin.catalog.state"), stateText(plan.retired)),
    saleCell)
  const draw = () => {
    if (!mayChange || plan.retired) return saleCell.replaceChildren(saleBadge(plan))
    const button = h("button", {
      type: "button",
      class: plan.onSale ? "danger-outline" : "secondary",
      "aria-label": adminText(plan.onSale ? "admin.catalog.putOffSale" : "admin.catalog.putOnSale", { plan: plan.name }),
      "data-testid": `admin-plan-toggle-${plan.id}`
    }, adminText(plan.onSale ? "admin.catalog.takeOff" : "admin.catalog.putOn"))
    button.addEventListener("click", () => {
      void (async () => {
        const onSale = !plan.onSale
        if (!onSale && !(await confirmDialog(adminText("admin.catalog.confirmOff", { plan: plan.name }), { danger: true, confirmLabel: adminText("admin.catalog.takeOff") }))) return
        await run(row, async () => {
          const answer = await api.post<PlanSale>(`/api/admin/catalog/plans/${encodeURIComponent(plan.id)}/sale`, { onSale })
          plan = { ...plan, onSale: answer.onSale }
          draw()
        }, { success: adminText(onSale ? "admin.catalog.nowOn" : "admin.catalog.nowOff", { plan: plan.name }) })
      })()
    })
    saleCell.replaceChildren(saleBadge(plan), " ", button)
  }
  draw()
  return row
}

export const catalogView: View = async ({ root, user, alive }) => {
  setAdminTitle(adminText("admin.catalog.title"))
  const errors = errorBox("admin-catalog-error")
  root.append(h("h1", {}, adminText("admin.catalog.title")), h("p", { class: "hint" }, adminText("admin.catalog.hint")), errors.el, loading())
  let catalog: AdminCatalog
  try {
    catalog = await api.get<AdminCatalog>("/api/admin/catalog")
  } catch (error) {
    if (!alive()) return
    root.lastChild?.remove()
    errors.show(error)
    return
  }
  if (!alive()) return
  const mayChange = user?.role === "admin"
  root.lastChild?.remove()
  const name = adminText("admin.catalog.name")
  root.append(h("div", { class: "stack" },
    section(adminText("admin.catalog.plans"), "admin-catalog-plans",
      table([adminText("admin.catalog.plan"), adminText("admin.catalog.kind"), adminText("admin.catalog.price"), adminText("admin.catalog.resources"),
        adminText("admin.catalog.state"), adminText("admin.catalog.sale")], catalog.plans.map((p) => planRow(p, mayChange)), "admin-plans")),
    section(adminText("admin.catalog.templates"), "admin-catalog-templates",
      table([adminText("admin.catalog.template"), adminText("admin.catalog.cluster"), adminText("admin.catalog.node"), adminText("admin.catalog.vmid"),
        adminText("admin.catalog.state")], catalog.templates.map((tpl) =>
        h("tr", {}, cell(adminText("admin.catalog.template"), tpl.name, h("div", { class: "muted" }, tpl.id)),
          cell(adminText("admin.catalog.cluster"), tpl.cluster), cell(adminText("admin.catalog.node"), tpl.node),
          cell(adminText("admin.catalog.vmid"), String(tpl.vmid)), cell(adminText("admin.catalog.state"), stateText(tpl.retired)))), "admin-templates")),
    section(adminText("admin.catalog.pools"), "admin-catalog-pools",
      table([adminText("admin.catalog.pool"), adminText("admin.catalog.cluster"), adminText("admin.catalog.network"), adminText("admin.catalog.fill"),
        adminText("admin.catalog.state")], catalog.pools.map((pool) => {
        const total = pool.free + pool.assigned
        return h("tr", { "data-testid": `admin-pool-${pool.id}` }, cell(adminText("admin.catalog.pool"), pool.id),
          cell(adminText("admin.catalog.cluster"), pool.cluster),
          cell(adminText("admin.catalog.network"), `${pool.cidr} · ${pool.gateway} · ${pool.bridge}`),
          cell(adminText("admin.catalog.fill"),
            h("meter", { min: 0, max: Math.max(total, 1), value: pool.assigned, "aria-label": `${adminText("admin.catalog.fill")} ${pool.id}` }), " ",
            adminText("admin.catalog.fillValue", { assigned: pool.assigned, free: pool.free })),
          cell(adminText("admin.catalog.state"), stateText(pool.retired)))
      }), "admin-pools")),
    section(adminText("admin.catalog.clusters"), "admin-catalog-clusters",
      table([name, adminText("admin.catalog.url"), adminText("admin.catalog.state")], catalog.clusters.map((c) =>
        h("tr", {}, cell(name, c.name), cell(adminText("admin.catalog.url"), c.url), cell(adminText("admin.catalog.state"), stateText(c.retired)))), "admin-clusters")),
    section(adminText("admin.catalog.panels"), "admin-catalog-panels",
      table([name, adminText("admin.catalog.url"), adminText("admin.catalog.state")], catalog.panels.map((p) =>
        h("tr", {}, cell(name, p.name), cell(adminText("admin.catalog.url"), p.url), cell(adminText("admin.catalog.state"), stateText(p.retired)))), "admin-panels"))))
}
