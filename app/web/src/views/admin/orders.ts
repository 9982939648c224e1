// The back-office's failed orders: when, which plan, the step they reached and why they failed, with links to the
// service and the customer (GET /api/admin/orders/failed); an admin retries one here (orderRetry.ts).
import { api, type StaffOrder } from "../../api.ts"
import { link, type View } from "../../app.ts"
import { h } from "../../dom.ts"
import { formatDateTime, stepName } from "../../i18n.ts"
import { errorBox, loading } from "../../ui.ts"
import { cell, none, setAdminTitle, table } from "./parts.ts"
import { opsText } from "./opsTexts.ts"
import { kindName } from "./texts.ts"
import { retryPart } from "./orderRetry.ts"

const orderRow = (isAdmin: boolean, reload: () => void) => (o: StaffOrder) =>
  h("tr", { "data-testid": "ops-failed-order", "data-order": o.id },
    cell(opsText("ops.orders.date"), h("time", { datetime: o.updatedAt }, formatDateTime(o.updatedAt))),
    cell(opsText("ops.orders.plan"), `${o.planId} (${kindName(o.kind)})`),
    cell(opsText("ops.orders.step"), `${o.progress.step}/${o.progress.total} ${stepName(o.kind, o.progress.step, o.progress.name)}`),
    cell(opsText("ops.orders.reason"), o.failureReason ?? none()),
    cell(opsText("ops.orders.links"),
      o.subscriptionId === undefined ? null : link(`/admin/services/${encodeURIComponent(o.subscriptionId)}`, opsText("ops.orders.service")),
      " ",
      link(`/admin/customers/${encodeURIComponent(o.userId)}`, opsText("ops.orders.customer"))),
    cell(opsText("ops.customerOrders.retry"), retryPart(o, isAdmin, reload)))

export const ordersView: View = async (ctx) => {
  const { alive, root, user } = ctx
  setAdminTitle(opsText("ops.orders.title"))
  const errors = errorBox("ops-orders-error")
  root.append(h("h1", {}, opsText("ops.orders.title")), errors.el, loading())
  try {
    const { orders } = await api.get<{ orders: ReadonlyArray<StaffOrder> }>("/api/admin/orders/failed")
    if (!alive()) return
    root.lastChild?.remove()
    root.append(orders.length === 0
      ? h("p", { class: "muted" }, opsText("ops.orders.none"))
      : table([opsText("ops.orders.date"), opsText("ops.orders.plan"), opsText("ops.orders.step"), opsText("ops.orders.reason"), opsText("ops.orders.links"),
        opsText("ops.customerOrders.retry")],
        orders.map(orderRow(user?.role === "admin", () => {
          root.replaceChildren()
          void ordersView(ctx)
        })), "ops-failed-orders"))
  } catch (error) {
    if (!alive()) return
    root.lastChild?.remove()
    errors.show(error)
  }
}
