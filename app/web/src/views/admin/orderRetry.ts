// A failed order's retry, wherever an operator sees the order (the failed orders, a service's page, a customer's
// orders): for an admin, "Retry (the customer pays again)" with a confirmation first (POST
// /api/admin/orders/:id/retry), and on a retry the customer let expire unpaid; once retried, the link to its retry; on a
// retry, the link to the order it retries.
// Orders have no page of their own in the back-office: a link opens the customer's page, which lists their orders.
import { api, type StaffOrder } from "../../api.ts"
import { announce, link } from "../../app.ts"
import { h } from "../../dom.ts"
import { confirmDialog, run } from "../../ui.ts"
import { opsText } from "./opsTexts.ts"

const orderLink = (o: StaffOrder, id: string, text: string, testid: string) =>
  link(`/admin/customers/${encodeURIComponent(o.userId)}`, text, { "data-testid": testid, "data-order": id })

/** What an operator sees of the order's retries, and for an admin of a failed order not retried yet, the button. */
export const retryPart = (o: StaffOrder, isAdmin: boolean, reload: () => void): HTMLElement => {
  const part = h("span", { class: "retry", "data-testid": "ops-order-retry" })
  if (o.retryOf !== undefined) part.append(orderLink(o, o.retryOf, opsText("ops.retry.retryOf", { id: o.retryOf }), "ops-retry-of"), " ")
  if (o.retriedAs !== undefined) {
    part.append(orderLink(o, o.retriedAs, opsText("ops.retry.retriedAs", { id: o.retriedAs }), "ops-retried-as"))
  } else if (isAdmin && (o.status === "failed" || (o.status === "expired" && o.retryOf !== undefined))) {
    const button = h("button", { type: "button", class: "secondary", "data-testid": "ops-retry" }, opsText("ops.retry.button"))
    button.addEventListener("click", () => {
      void (async () => {
        if (!(await confirmDialog(opsText("ops.retry.confirm", { id: o.id }), { confirmLabel: opsText("ops.retry.button") }))) return
        const done = await run(button, async () => {
          const retry = await api.post<StaffOrder>(`/api/admin/orders/${encodeURIComponent(o.id)}/retry`)
          announce(opsText("ops.retry.done", { id: retry.id }))
        })
        if (done) reload()
      })()
    })
    part.append(button)
  }
  return part
}
