// A subscription's contract functions, wherever the subscription is shown (the dashboard, the billing page, the service
// pages): the cancellation function ("Cancel your contract") and, for a consumer within the withdrawal period, the
// withdrawal function ("Withdraw from this contract here"), each with its confirmation step (issue 13 §3).
import { api, type Subscription, type User } from "../api.ts"
import { announce, navigate, refresh } from "../app.ts"
import { h } from "../dom.ts"
import { formatDate, formatDateTime, formatPrice, t } from "../i18n.ts"
import { confirmDialog, run, section } from "../ui.ts"

/**
 * The withdrawal function of a subscription (a consumer's, within its 14 days): the button, then the confirmation
 * step with what is declared (who, which contract, concluded when, declared when), then the answer. Null when the
 * subscription offers none.
 */
export const withdrawButton = (sub: Subscription, planName: string, user: User | null, place: HTMLElement, redraw: () => void): HTMLElement | null => {
  if (sub.withdrawableUntil === undefined) return null
  const button = h("button", { type: "button", class: "danger-outline", "data-testid": `subscription-withdraw-${sub.id}`, "aria-label": `${t("sub.withdraw")}: ${planName}` },
    t("sub.withdraw"))
  button.addEventListener("click", () => {
    void (async () => {
      const name = user === null ? "" : `${user.firstName} ${user.lastName}`
      const declaration = t("sub.confirmWithdraw", { name, plan: planName, id: sub.id, concluded: formatDateTime(sub.createdAt), date: formatDateTime(Date.now()) })
      const extra = h("div", { "data-testid": "withdraw-declaration" }, h("h2", {}, t("sub.confirmWithdrawTitle")), h("p", {}, declaration), h("p", { class: "muted" }, t("sub.confirmWithdrawEffect")))
      if (!(await confirmDialog(t("sub.withdrawUntil", { date: formatDateTime(sub.withdrawableUntil ?? "") }), { danger: true, confirmLabel: t("sub.confirmWithdrawOk"), extra }))) return
      let refundCents = 0
      const done = await run(place, async () => {
        refundCents = (await api.post<{ refundCents: number }>(`/api/subscriptions/${encodeURIComponent(sub.id)}/withdraw`)).refundCents
        redraw()
      })
      if (done) announce(t("sub.withdrawn", { refund: formatPrice(refundCents) }))
    })()
  })
  return button
}

/**
 * The cancellation function of a subscription ("Cancel your contract"): one click, then the confirmation step, then
 * the answer; disabled once cancelled or ended.
 */
export const cancelButton = (sub: Subscription, planName: string, place: HTMLElement, redraw: () => void): HTMLElement => {
  const usable = sub.status === "active" || sub.status === "suspended"
  const cancel = h("button", { type: "button", class: "danger-outline", "data-testid": `subscription-cancel-${sub.id}`, "aria-label": `${t("sub.cancel")}: ${planName}`,
    disabled: !usable || sub.cancelAtPeriodEnd }, t("sub.cancel"))
  cancel.addEventListener("click", () => {
    void (async () => {
      if (!(await confirmDialog(t("sub.confirmCancel", { plan: planName, date: formatDate(sub.currentPeriodEnd) }), { danger: true, confirmLabel: t("sub.confirmCancelOk") }))) return
      await run(place, async () => {
        await api.post(`/api/subscriptions/${encodeURIComponent(sub.id)}/cancel`)
        redraw()
      }, { success: t("sub.cancelled", { date: formatDate(sub.currentPeriodEnd) }) })
    })()
  })
  return cancel
}

/**
 * The contract section of a service page: its subscription's cancellation and withdrawal functions, and what was
 * decided (cancelled, withdrawn). Empty when the subscription cannot be read.
 */
export const contractSection = async (subscriptionId: string, planName: string, user: User | null): Promise<HTMLElement | null> => {
  let sub: Subscription | undefined
  try {
    const { subscriptions } = await api.get<{ subscriptions: ReadonlyArray<Subscription> }>("/api/subscriptions")
    sub = subscriptions.find((s) => s.id === subscriptionId)
  } catch {
    return null
  }
  if (sub === undefined) return null
  const place = h("div", { class: "row wrap", "data-testid": "contract-actions" })
  place.append(cancelButton(sub, planName, place, refresh))
  // A withdrawal ends the service now (its removal runs on after the answer): its own page has nothing left to show,
  // and redrawn at once it would show the service still up while its parts fail. The dashboard shows the contract's end.
  const withdraw = withdrawButton(sub, planName, user, place, () => navigate("/"))
  if (withdraw !== null) place.append(withdraw)
  const words = sub.withdrawnAt !== undefined
    ? t("sub.withdrawnOn", { date: formatDateTime(sub.withdrawnAt) })
    : sub.cancelAtPeriodEnd
    ? t("sub.cancelled", { date: formatDate(sub.currentPeriodEnd) })
    : sub.withdrawableUntil !== undefined
    ? t("sub.withdrawUntil", { date: formatDateTime(sub.withdrawableUntil) })
    : null
  return section(t("sub.contract"), "contract", words === null ? null : h("p", { class: "muted", "data-testid": "contract-words" }, words), place)
}
