// Invoices: the customer's invoices and credit notes (newest first, older ones on demand) with their Factur-X PDF and
// XML, and the billing details they are made out to (GET/PUT /api/billing-profile). Consumers read totals including
// VAT; professionals see the amount excluding VAT beside it.
import { api, type BillingProfile, type Invoice } from "../api.ts"
import { announce, setTitle, type View } from "../app.ts"
import { h } from "../dom.ts"
import { formatDate, formatPrice, t } from "../i18n.ts"
import { errorBox, run } from "../ui.ts"

interface Page {
  readonly invoices: ReadonlyArray<Invoice>
  readonly next?: string
}

/** Each field's longest value, as PUT /api/billing-profile accepts it: the browser stops typing there. */
const MAX_LENGTH: Readonly<Record<string, number>> = {
  name: 200,
  companyName: 200,
  line1: 200,
  line2: 200,
  postcode: 16,
  city: 100,
  country: 64,
  vatNumber: 20
}

const field = (name: string, label: string, value: string | undefined, required: boolean) => {
  const id = `billing-${name}`
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, type: "text", name, value: value ?? "", required, maxlength: MAX_LENGTH[name], autocomplete: "off", "data-testid": id }))
}

const vatStatus = (profile: BillingProfile): HTMLElement | null => {
  const check = profile.vatNumberCheck
  if (check === undefined) return null
  const text = check.status === "valid"
    ? t("invoices.vat.valid", { date: formatDate(check.checkedAt) })
    : t(check.status === "invalid" ? "invoices.vat.invalid" : "invoices.vat.unavailable")
  return h("p", { class: "hint", "data-testid": "billing-vat-status" }, text)
}

/** The billing-details form (also shown on the order page when an order needs them first). */
export const profileForm = (profile: BillingProfile, onSaved: (p: BillingProfile) => void): HTMLElement => {
  const errors = errorBox("billing-error")
  const form = h("form", { class: "stack", "data-testid": "billing-form" },
    h("p", { class: "hint" }, t("invoices.profileHint")),
    profile.saved ? null : h("p", { class: "notice", "data-testid": "billing-unsaved" }, t("invoices.profileUnsaved")),
    field("name", t("invoices.name"), profile.name, true),
    field("companyName", t("invoices.company"), profile.companyName, false),
    field("line1", t("invoices.line1"), profile.address.line1, true),
    field("line2", t("invoices.line2"), profile.address.line2, false),
    field("postcode", t("invoices.postcode"), profile.address.postcode, true),
    field("city", t("invoices.city"), profile.address.city, true),
    field("country", t("invoices.country"), profile.address.country, true),
    field("vatNumber", t("invoices.vatNumber"), profile.vatNumber, false),
    vatStatus(profile),
    errors.el,
    h("button", { type: "submit", class: "primary", "data-testid": "billing-save" }, t("common.save")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const data = new FormData(form)
    const text = (name: string) => String(data.get(name) ?? "").trim()
    const optional = (name: string) => text(name) === "" ? {} : { [name]: text(name) }
    void run(form, async () => {
      const saved = await api.put<BillingProfile>("/api/billing-profile", {
        name: text("name"),
        ...optional("companyName"),
        address: { line1: text("line1"), ...optional("line2"), postcode: text("postcode"), city: text("city"), country: text("country").toUpperCase() },
        ...optional("vatNumber")
      })
      onSaved(saved)
      announce(t("invoices.saved"))
    }, { errors })
  })
  return form
}

// Each cell names its column, read on a narrow screen where the table's rows stack (the panel's .table layout).
const row = (invoice: Invoice, professional: boolean): HTMLElement =>
  h("tr", { "data-testid": `invoice-${invoice.number}` },
    h("td", { "data-label": t("invoices.number") }, invoice.number),
    h("td", { "data-label": t("invoices.kind") }, t(invoice.kind === "invoice" ? "invoices.kind.invoice" : "invoices.kind.credit_note")),
    h("td", { "data-label": t("invoices.date") }, formatDate(invoice.issuedAt)),
    professional ? h("td", { class: "num", "data-label": t("invoices.totalExcl") }, formatPrice(invoice.totalExcludingVatCents)) : null,
    h("td", { class: "num", "data-label": t("invoices.total") }, formatPrice(invoice.totalIncludingVatCents)),
    h("td", { "data-label": t("invoices.download") },
      h("a", { href: `/api/invoices/${invoice.id}/pdf`, download: `${invoice.number}.pdf`, "data-testid": `invoice-pdf-${invoice.number}` }, t("invoices.pdf")),
      " · ",
      h("a", { href: `/api/invoices/${invoice.id}/xml`, download: `${invoice.number}.xml` }, t("invoices.xml"))))

export const invoicesView: View = async ({ alive, root, user }) => {
  setTitle("invoices.title")
  const professional = user?.accountType === "professional"
  const [profile, first] = await Promise.all([
    api.get<BillingProfile>("/api/billing-profile"),
    api.get<Page>("/api/invoices")
  ])
  if (!alive()) return
  const profileCard = h("section", { class: "card", "aria-labelledby": "billing-heading" })
  const drawProfile = (p: BillingProfile) => {
    profileCard.replaceChildren(h("h2", { id: "billing-heading" }, t("invoices.profile")), profileForm(p, drawProfile))
  }
  drawProfile(profile)

  const body = h("tbody", {})
  const more = h("button", { type: "button", "data-testid": "invoices-more" }, t("invoices.more"))
  const append = (page: Page) => {
    for (const invoice of page.invoices) body.append(row(invoice, professional))
    more.hidden = page.next === undefined
    more.dataset["after"] = page.next ?? ""
  }
  more.addEventListener("click", () => {
    void run(more, async () => append(await api.get<Page>(`/api/invoices?after=${encodeURIComponent(more.dataset["after"] ?? "")}`)))
  })
  append(first)
  const list = first.invoices.length === 0
    ? h("p", { "data-testid": "invoices-empty" }, t("invoices.empty"))
    : h("div", {},
      h("table", { class: "table", "data-testid": "invoices-table" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, t("invoices.number")),
          h("th", { scope: "col" }, t("invoices.kind")),
          h("th", { scope: "col" }, t("invoices.date")),
          professional ? h("th", { scope: "col" }, t("invoices.totalExcl")) : null,
          h("th", { scope: "col" }, t("invoices.total")),
          h("th", { scope: "col" }, t("invoices.download")))),
        body),
      more)
  root.append(h("h1", {}, t("invoices.title")), h("section", { class: "card" }, list), profileCard)
}
