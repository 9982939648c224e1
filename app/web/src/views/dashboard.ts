// The dashboard: the user's subscriptions (state, period end, renew, cancel), VPSes and game servers.
import { api, type GameServer, type Plan, type Plans, type Subscription, type User, type Vps } from "../api.ts"
import { link, setTitle, type View } from "../app.ts"
import { h } from "../dom.ts"
import { formatDate, formatDateTime, t } from "../i18n.ts"
import { shownPrice } from "../prices.ts"
import { confirmDialog, errorBox, loading, run, section, stateBadge } from "../ui.ts"
import { cancelButton, withdrawButton } from "./contract.ts"

/** The plans on sale by id, priced for the signed-in customer (none when the catalog does not answer). */
export const planNames = async (): Promise<{ readonly byId: Map<string, Plan>; readonly audience: Plans["audience"] }> => {
  try {
    const { audience, plans } = await api.get<Plans>("/api/plans")
    return { byId: new Map(plans.map((p) => [p.id, p])), audience }
  } catch {
    return { byId: new Map(), audience: "consumer" }
  }
}

const subscriptionRow = (sub: Subscription, plans: Awaited<ReturnType<typeof planNames>>, user: User | null, redraw: () => void): HTMLElement => {
  const plan = plans.byId.get(sub.planId)
  const planName = plan?.name ?? sub.planId
  const usable = sub.status === "active" || sub.status === "suspended"
  const renew = h("button", { type: "button", "data-testid": `subscription-renew-${sub.id}`, "aria-label": `${t("sub.renew")} ${planName}`, disabled: !usable },
    t("sub.renew"))
  const actions = h("td", { class: "actions" }, renew)
  const row = h("tr", { "data-testid": `subscription-${sub.id}`, "data-subscription": sub.id },
    h("td", { "data-label": t("sub.plan") }, planName, plan === undefined ? null : h("div", { class: "muted" }, t("common.perMonth", { price: shownPrice(plan, plans.audience) })),
      // What its product says of the service, whatever the product: its name and where it is reached.
      sub.service === undefined ? null : h("div", { class: "muted", "data-testid": `subscription-service-${sub.id}` },
        sub.service.address === "" ? sub.service.name : `${sub.service.name} · ${sub.service.address}`)),
    h("td", { "data-label": t("common.state") }, stateBadge(sub.status, `subscription-state-${sub.id}`),
      sub.cancelAtPeriodEnd && sub.withdrawnAt === undefined ? h("div", { class: "muted", "data-testid": `subscription-cancelled-${sub.id}` }, t("sub.endsAtPeriodEnd")) : null,
      sub.withdrawnAt === undefined ? null : h("div", { class: "muted", "data-testid": `subscription-withdrawn-${sub.id}` }, t("sub.withdrawnOn", { date: formatDateTime(sub.withdrawnAt) }))),
    h("td", { "data-label": t("sub.periodEnd") }, h("time", { datetime: sub.currentPeriodEnd, "data-testid": `subscription-period-end-${sub.id}` }, formatDate(sub.currentPeriodEnd))),
    actions)
  actions.append(cancelButton(sub, planName, row, redraw))
  const withdraw = withdrawButton(sub, planName, user, row, redraw)
  if (withdraw !== null) actions.append(withdraw)
  // Renewing charges at once: the customer sees what and how much before, as for the other contract functions.
  renew.addEventListener("click", () => {
    void (async () => {
      const question = plan === undefined
        ? t("sub.confirmRenewUnpriced", { plan: planName })
        : t("sub.confirmRenew", { plan: planName, price: shownPrice(plan, plans.audience) })
      if (!(await confirmDialog(question, { confirmLabel: t("sub.confirmRenewOk") }))) return
      await run(row, async () => {
        await api.post<{ subscription: Subscription }>(`/api/subscriptions/${encodeURIComponent(sub.id)}/renew`)
        redraw()
      }, { success: t("common.done") })
    })()
  })
  return row
}

export const dashboardView: View = async ({ root, user, alive }) => {
  setTitle("dash.title")
  const body = h("div", { class: "stack" }, loading())
  root.append(
    h("div", { class: "page-head" },
      h("h1", {}, t("dash.title")),
      link("/order", t("dash.orderCta"), { class: "button primary", "data-testid": "dashboard-order" })),
    user === null ? "" : h("p", { "data-testid": "dashboard-hello" }, t("dash.hello", { name: user.firstName }),
      user.companyName === undefined ? null : h("span", { class: "muted", "data-testid": "dashboard-company" }, ` · ${t("dash.company", { company: user.companyName })}`)),
    body)
  const errors = errorBox("dashboard-error")
  const draw = async () => {
    try {
      const [plans, subs, vps, games] = await Promise.all([
        planNames(),
        api.get<{ subscriptions: ReadonlyArray<Subscription> }>("/api/subscriptions"),
        api.get<{ vps: ReadonlyArray<Vps> }>("/api/vps"),
        api.get<{ gameServers: ReadonlyArray<GameServer> }>("/api/game-servers")
      ])
      if (!alive()) return
      const redraw = () => void draw()
      const visibleSubs = subs.subscriptions.filter((s) => s.status !== "failed")
      body.replaceChildren(
        errors.el,
        section(t("dash.subscriptions"), "subscriptions",
          visibleSubs.length === 0
            ? h("p", { class: "muted" }, t("dash.noSubscriptions"))
            : h("table", { class: "table" },
              h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("sub.plan")), h("th", { scope: "col" }, t("common.state")),
                h("th", { scope: "col" }, t("sub.periodEnd")), h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("common.actions"))))),
              h("tbody", {}, visibleSubs.map((s) => subscriptionRow(s, plans, user, redraw))))),
        section(t("dash.vps"), "vps-list",
          vps.vps.length === 0
            ? h("p", { class: "muted" }, t("dash.noVps"))
            : h("ul", { class: "service-list" }, vps.vps.map((v) =>
              h("li", { "data-testid": `vps-item-${v.id}` },
                link(`/vps/${encodeURIComponent(v.id)}`, v.hostname, { "data-testid": "vps-link" }),
                h("span", { class: "muted" }, ` ${v.address} `), stateBadge(v.status))))),
        section(t("dash.games"), "game-list",
          games.gameServers.length === 0
            ? h("p", { class: "muted" }, t("dash.noGames"))
            : h("ul", { class: "service-list" }, games.gameServers.map((g) =>
              h("li", { "data-testid": `game-item-${g.id}` },
                link(`/game/${encodeURIComponent(g.id)}`, g.name, { "data-testid": "game-link" }),
                h("span", { class: "muted" }, ` ${g.address} `), stateBadge(g.status)))))
      )
    } catch (error) {
      if (!alive()) return
      errors.show(error)
      body.replaceChildren(errors.el)
    }
  }
  await draw()
}
