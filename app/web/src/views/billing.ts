// Billing: the saved card (brand, last 4, expiry) and the provider's page to change it, each subscription's renewal in
// words (the next charge and its amount, a declined charge and its next try, a payment waiting for the customer's
// approval, a lapse, a cancellation) with "pay now", and the payment history.
import { api, ApiError, errorText, type Payment, type PaymentAnswer, type Renewal, type SavedCard, type Subscription, type User } from "../api.ts"
import { announce, refresh, setTitle, type View } from "../app.ts"
import { h } from "../dom.ts"
import { formatDate, formatPrice, t } from "../i18n.ts"
import { errorBox, loading, run, section } from "../ui.ts"
import { cancelButton, withdrawButton } from "./contract.ts"

/** The renewal in one sentence, as the customer reads it. */
export const renewalWords = (r: Renewal): string => {
  const price = formatPrice(r.amountCents)
  switch (r.state) {
    case "renews":
      return t("billing.renews", { date: formatDate(r.nextChargeAt ?? ""), price })
    case "payment_failed":
      return r.nextAttemptAt === null
        ? t("billing.failedNoRetry", { date: formatDate(r.endsAt ?? "") })
        : t("billing.failed", { date: formatDate(r.nextAttemptAt) })
    case "awaiting_authentication":
      return t("billing.awaitingApproval", { price })
    case "lapsed":
      return t("billing.lapsed", { date: formatDate(r.endsAt ?? "") })
    case "cancelled":
      return t("billing.cancelled", { date: formatDate(r.endsAt ?? "") })
    case "ended":
      return t("billing.ended")
  }
}

const payable = (r: Renewal) => r.state === "payment_failed" || r.state === "awaiting_authentication" || r.state === "lapsed"

/** A renewal's row, with its contract's cancellation and (for a consumer, in time) withdrawal functions. */
const renewalRow = (r: Renewal, sub: Subscription | undefined, user: User | null): HTMLElement => {
  const pay = h("button", { type: "button", class: "primary", "data-testid": `billing-pay-${r.subscriptionId}` }, t("billing.payNow"))
  pay.addEventListener("click", () => {
    void run(pay, async () => {
      const answer = await api.post<PaymentAnswer>(`/api/subscriptions/${encodeURIComponent(r.subscriptionId)}/pay`)
      if (answer.outcome === "pay_on_page") {
        location.assign(answer.url)
        return
      }
      announce(t("billing.paid"))
      refresh()
    })
  })
  const actions = h("td", { class: "actions" }, payable(r) ? pay : null)
  const row = h("tr", { "data-testid": `billing-renewal-${r.subscriptionId}`, "data-state": r.state },
    h("td", { "data-label": t("sub.plan") }, r.planName),
    h("td", { "data-label": t("common.state"), "data-testid": `billing-words-${r.subscriptionId}` }, renewalWords(r),
      r.lastFailure === null || r.state === "renews" ? null : h("div", { class: "muted" }, t("billing.lastFailure", { reason: r.lastFailure }))),
    actions)
  if (sub !== undefined) {
    actions.append(cancelButton(sub, r.planName, row, refresh))
    const withdraw = withdrawButton(sub, r.planName, user, row, refresh)
    if (withdraw !== null) actions.append(withdraw)
  }
  return row
}

const cardSection = async (): Promise<HTMLElement> => {
  const errors = errorBox("billing-card-error")
  const change = h("button", { type: "button", "data-testid": "billing-change-card" }, t("billing.changeCard"))
  change.addEventListener("click", () => {
    void run(change, async () => {
      const { url } = await api.post<{ url: string }>("/api/payment-method/update")
      location.assign(url)
    }, { errors })
  })
  let card: SavedCard | null = null
  try {
    card = await api.get<SavedCard>("/api/payment-method")
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) errors.show(error)
  }
  const words = card === null
    ? t("billing.noCard")
    : t("billing.card", { brand: card.brand.toUpperCase(), last4: card.last4, exp: `${String(card.expMonth).padStart(2, "0")}/${card.expYear}` })
  return section(t("billing.cardTitle"), "billing-card", h("p", { "data-testid": "billing-card-words" }, words), errors.el, change)
}

const historySection = (payments: ReadonlyArray<Payment>): HTMLElement =>
  section(t("billing.historyTitle"), "billing-history",
    payments.length === 0
      ? h("p", { class: "muted" }, t("billing.noPayments"))
      : h("table", {},
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("billing.date")), h("th", { scope: "col" }, t("billing.kind")),
          h("th", { scope: "col" }, t("billing.amount")))),
        h("tbody", {}, payments.map((p) =>
          h("tr", { "data-testid": `billing-payment-${p.id}` },
            h("td", { "data-label": t("billing.date") }, formatDate(p.createdAt)),
            h("td", { "data-label": t("billing.kind") }, p.kind === "charge" ? t("billing.charge") : t("billing.refund")),
            h("td", { "data-label": t("billing.amount") }, formatPrice(p.amountCents)))))))

export const billingView: View = async ({ alive, root, user }) => {
  setTitle("billing.title")
  const waiting = loading()
  root.append(h("h1", {}, t("billing.title")), waiting)
  try {
    const [card, { renewals }, { subscriptions }, { payments }] = await Promise.all([
      cardSection(),
      api.get<{ renewals: ReadonlyArray<Renewal> }>("/api/subscriptions/renewals"),
      api.get<{ subscriptions: ReadonlyArray<Subscription> }>("/api/subscriptions"),
      api.get<{ payments: ReadonlyArray<Payment> }>("/api/payments")
    ])
    if (!alive()) return
    waiting.remove()
    root.append(
      card,
      section(t("billing.renewalsTitle"), "billing-renewals",
        renewals.length === 0
          ? h("p", { class: "muted" }, t("billing.noSubscriptions"))
          : h("table", {},
            h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("sub.plan")), h("th", { scope: "col" }, t("billing.renewal")),
              h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("common.actions"))))),
            h("tbody", {}, renewals.map((r) => renewalRow(r, subscriptions.find((s) => s.id === r.subscriptionId), user))))),
      historySection(payments)
    )
  } catch (error) {
    if (!alive()) return
    waiting.remove()
    announce(errorText(error), "error")
  }
}
