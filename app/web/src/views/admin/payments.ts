// The back-office's payments page for one customer: charges and refunds (the ledger), a refund of a charge in part or
// in full (admin; one idempotency key per refund meant, so a double click refunds once), and the e-mails we sent the
// customer, each of which support can send again (GET/POST /api/admin/customers/:id/payments, …/notices, …).
import { api, type NoticeRecord, type RefundAnswer, type StaffPayment } from "../../api.ts"
import { navigate, type View } from "../../app.ts"
import { field, h } from "../../dom.ts"
import { formatDateTime, formatPrice } from "../../i18n.ts"
import { confirmDialog, errorBox, loading, run, section } from "../../ui.ts"
import { cell, setAdminTitle, table } from "./parts.ts"
import { noticeName, opsText } from "./opsTexts.ts"

const REASONS = ["requested_by_customer", "duplicate", "goodwill", "service_problem"] as const

/** "4.50" or "4,50" euros as exact cents; null when it is not an amount. */
export const centsOf = (text: string): number | null => {
  const match = /^(\d{1,7})(?:[.,](\d{1,2}))?$/u.exec(text.trim())
  if (match === null) return null
  return Number(match[1]) * 100 + Number((match[2] ?? "0").padEnd(2, "0"))
}

/** Opens a customer's payments by their id. */
export const paymentsSearchView: View = ({ root }) => {
  setAdminTitle(opsText("ops.payments.title"))
  const input = h("input", { type: "text", name: "customer", required: true, autocomplete: "off", "data-testid": "ops-payments-customer" })
  const form = h("form", { class: "inline-form", "data-testid": "ops-payments-open" },
    field(opsText("ops.payments.customerId"), input), h("button", { type: "submit", class: "primary" }, opsText("ops.payments.open")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    navigate(`/admin/payments/${encodeURIComponent(input.value.trim())}`)
  })
  root.append(h("h1", {}, opsText("ops.payments.title")), h("p", { class: "hint" }, opsText("ops.payments.hint")), form)
}

/** The refund form of one charge: an amount up to what is left, a reason, a key made once per refund meant. */
const refundForm = (charge: StaffPayment, reload: () => void): HTMLElement => {
  const left = charge.refundableCents ?? 0
  const errors = errorBox(`ops-refund-error-${charge.id}`)
  const amount = h("input", { type: "text", inputmode: "decimal", required: true, value: (left / 100).toFixed(2), "data-testid": "ops-refund-amount" })
  const reason = h("select", { "data-testid": "ops-refund-reason" }, REASONS.map((r) => h("option", { value: r }, opsText(`ops.reason.${r}`))))
  const form = h("form", { class: "inline-form", "data-testid": "ops-refund-form" },
    field(opsText("ops.payments.refundAmount", { max: formatPrice(left) }), amount), field(opsText("ops.payments.refundReason"), reason), errors.el,
    h("button", { type: "submit", class: "danger-outline" }, opsText("ops.payments.doRefund")))
  // One key per refund this form means: clicking again (or twice) sends the same one.
  const key = crypto.randomUUID()
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void (async () => {
      const cents = centsOf(amount.value)
      if (cents === null || cents < 1 || cents > left) {
        errors.el.textContent = opsText("ops.payments.badAmount")
        errors.el.hidden = false
        return
      }
      if (!(await confirmDialog(opsText("ops.payments.confirmRefund", { amount: formatPrice(cents) }), { danger: true, confirmLabel: opsText("ops.payments.doRefund") }))) return
      let answer: RefundAnswer | undefined
      const done = await run(form, async () => {
        answer = await api.post<RefundAnswer>(`/api/admin/charges/${encodeURIComponent(charge.id)}/refunds`, {
          amountCents: cents,
          idempotencyKey: key,
          reason: reason.value
        })
      }, { errors, success: opsText("ops.payments.refunded", { amount: formatPrice(cents) }) })
      if (done && answer !== undefined) reload()
    })()
  })
  return form
}

const paymentRow = (p: StaffPayment, isAdmin: boolean, reload: () => void) =>
  h("tr", { "data-testid": "ops-payment", "data-kind": p.kind, "data-payment": p.id },
    cell(opsText("ops.payments.date"), h("time", { datetime: p.createdAt }, formatDateTime(p.createdAt))),
    cell(opsText("ops.payments.kind"), opsText(`ops.payments.kind.${p.kind}`)),
    cell(opsText("ops.payments.amount"), formatPrice(p.amountCents)),
    cell(opsText("ops.payments.refundable"), p.refundableCents === undefined ? "" : formatPrice(p.refundableCents)),
    cell(opsText("ops.payments.refund"), isAdmin && p.kind === "charge" && (p.refundableCents ?? 0) > 0 ? refundForm(p, reload) : null))

const noticeRow = (n: NoticeRecord) => {
  const resend = h("button", { type: "button", class: "secondary", "data-testid": "ops-resend" }, opsText("ops.notices.resend"))
  resend.addEventListener("click", () => {
    void run(resend, () => api.post("/api/admin/notices/resend", { key: n.key }), { success: opsText("ops.notices.resent") })
  })
  return h("tr", { "data-testid": "ops-notice", "data-tag": n.tag },
    cell(opsText("ops.notices.kind"), noticeName(n.tag)),
    cell(opsText("ops.notices.created"), h("time", { datetime: n.createdAt }, formatDateTime(n.createdAt))),
    cell(opsText("ops.notices.sent"), n.sentAt === null ? opsText("ops.notices.notSent") : formatDateTime(n.sentAt)),
    cell(opsText("ops.notices.resend"), resend))
}

export const paymentsView: View = async (ctx) => {
  const { alive, params, root, user } = ctx
  const id = encodeURIComponent(params["id"] ?? "")
  setAdminTitle(opsText("ops.payments.title"))
  const errors = errorBox("ops-payments-error")
  root.append(h("h1", {}, opsText("ops.payments.title")), errors.el, loading())
  try {
    const [{ payments }, { notices }] = await Promise.all([
      api.get<{ payments: ReadonlyArray<StaffPayment> }>(`/api/admin/customers/${id}/payments`),
      api.get<{ notices: ReadonlyArray<NoticeRecord> }>(`/api/admin/customers/${id}/notices`)
    ])
    if (!alive()) return
    const reload = () => {
      root.replaceChildren()
      void paymentsView(ctx)
    }
    root.lastChild?.remove()
    root.append(h("div", { class: "stack" },
      section(opsText("ops.payments.ledger"), "ops-payments",
        payments.length === 0
          ? h("p", { class: "muted" }, opsText("ops.payments.none"))
          : table([opsText("ops.payments.date"), opsText("ops.payments.kind"), opsText("ops.payments.amount"), opsText("ops.payments.refundable"),
            opsText("ops.payments.refund")], payments.map((p) => paymentRow(p, user?.role === "admin", reload)), "ops-payments-table")),
      section(opsText("ops.notices.title"), "ops-notices",
        notices.length === 0
          ? h("p", { class: "muted" }, opsText("ops.notices.none"))
          : table([opsText("ops.notices.kind"), opsText("ops.notices.created"), opsText("ops.notices.sent"), opsText("ops.notices.resend")],
            notices.map(noticeRow), "ops-notices-table"))))
  } catch (error) {
    if (!alive()) return
    root.lastChild?.remove()
    errors.show(error)
  }
}
