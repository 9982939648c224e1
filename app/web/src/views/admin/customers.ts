// The back-office's customers: the search (e-mail, name, company, SIRET, invoice number, a service's address), kept
// in the address (?q=) so "back" finds it again, and a customer's page: profile, open sessions, subscriptions and
// the audit trail read page by page. Opening a customer's page is itself audited by the server.
import { api, type AuditEvent, type AuditPage, type Session, type StaffCustomerPage, type Subscription, type User } from "../../api.ts"
import { announce, link, navigate, type View } from "../../app.ts"
import { field, h } from "../../dom.ts"
import { formatDate, formatDateTime, formatPrice, stepName, t } from "../../i18n.ts"
import { confirmDialog, errorBox, loading, run, section, stateBadge } from "../../ui.ts"
import { cell, none, pagedSection, setAdminTitle, table } from "./parts.ts"
import { opsText } from "./opsTexts.ts"
import { retryPart } from "./orderRetry.ts"
import { adminText, auditActionText, kindName } from "./texts.ts"

const fullName = (u: User) => `${u.firstName} ${u.lastName}`
const roleText = (role: User["role"]) => adminText(`admin.role.${role}`)
const th = (text: string) => h("th", { scope: "col" }, text)

const customerRow = (u: User) =>
  h("tr", { "data-testid": "admin-customer", "data-customer": u.id },
    h("td", { "data-label": adminText("admin.customers.name") },
      link(`/admin/customers/${encodeURIComponent(u.id)}`, fullName(u), { "data-testid": "admin-customer-link" })),
    h("td", { "data-label": adminText("admin.customers.email") }, u.email),
    h("td", { "data-label": adminText("admin.customers.company") }, u.companyName ?? none()),
    h("td", { "data-label": adminText("admin.customers.siret") }, u.siret ?? none()),
    h("td", { "data-label": adminText("admin.customers.role") }, roleText(u.role)),
    h("td", { "data-label": adminText("admin.customers.since") }, h("time", { datetime: u.createdAt }, formatDate(u.createdAt))))

export const customersView: View = async ({ root, query, alive }) => {
  setAdminTitle(adminText("admin.customers.title"))
  const q = (query.get("q") ?? "").trim()
  const input = h("input", { type: "search", name: "q", value: q, minlength: 2, maxlength: 254, required: true, autocomplete: "off",
    "data-testid": "admin-search-input" })
  const form = h("form", { class: "inline-form", role: "search", "data-testid": "admin-search" },
    field(adminText("admin.customers.query"), input, adminText("admin.customers.queryHint")),
    h("div", { class: "field" }, h("button", { type: "submit", class: "primary", "data-testid": "admin-search-submit" }, adminText("admin.customers.submit"))))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    navigate(`/admin/customers?q=${encodeURIComponent(input.value.trim())}`)
  })
  const results = h("div", { "data-testid": "admin-search-results" })
  root.append(h("h1", {}, adminText("admin.customers.title")), h("div", { class: "card" }, form), results)
  if (q.length < 2) return
  const errors = errorBox("admin-search-error")
  results.append(loading())
  try {
    const { customers } = await api.get<{ customers: ReadonlyArray<User> }>(`/api/admin/customers?q=${encodeURIComponent(q)}`)
    if (!alive()) return
    const count = adminText("admin.customers.results", { count: customers.length })
    announce(count)
    results.replaceChildren(customers.length === 0
      ? h("p", { class: "muted", "data-testid": "admin-search-none" }, adminText("admin.customers.none"))
      : section(count, "admin-customers",
        table([adminText("admin.customers.name"), adminText("admin.customers.email"), adminText("admin.customers.company"),
          adminText("admin.customers.siret"), adminText("admin.customers.role"), adminText("admin.customers.since")],
        customers.map(customerRow), "admin-customers-table")))
  } catch (error) {
    if (!alive()) return
    errors.show(error)
    results.replaceChildren(errors.el)
  }
}

const auditRow = (e: AuditEvent) =>
  h("tr", { "data-testid": "admin-audit-event", "data-action": e.action },
    h("td", { "data-label": adminText("admin.audit.when") }, h("time", { datetime: e.at }, formatDateTime(e.at))),
    h("td", { "data-label": adminText("admin.audit.what") }, auditActionText(e.action)),
    h("td", { "data-label": adminText("admin.audit.who") },
      e.actorRole === "system" || e.actorRole === "anonymous"
        ? adminText(`admin.actor.${e.actorRole}`)
        : e.actorId === null
        ? roleText(e.actorRole)
        : link(`/admin/customers/${encodeURIComponent(e.actorId)}`, `${roleText(e.actorRole)} ${e.actorId.slice(0, 8)}`)),
    h("td", { "data-label": adminText("admin.audit.target") }, e.target === null ? none() : `${e.target.type} ${e.target.id}`),
    h("td", { "data-label": adminText("admin.audit.from") }, e.address ?? none()))

/** The customer's audit trail: the page's first events, then older ones a page at a time (keyset, newest first). */
const auditSection = (customerId: string, first: AuditPage): HTMLElement =>
  pagedSection({
    title: adminText("admin.customer.audit"),
    testid: "admin-audit",
    headings: [adminText("admin.audit.when"), adminText("admin.audit.what"), adminText("admin.audit.who"), adminText("admin.audit.target"),
      adminText("admin.audit.from")],
    empty: adminText("admin.customer.noAudit"),
    more: adminText("admin.audit.more"),
    first: { rows: first.events, next: first.next },
    row: auditRow,
    after: async (next) => {
      const page = await api.get<AuditPage>(`/api/admin/audit?user=${encodeURIComponent(customerId)}&limit=50&before=${encodeURIComponent(next)}`)
      return { rows: page.events, next: page.next }
    }
  })

const sessionRow = (s: Session) =>
  h("tr", { "data-testid": "admin-session" },
    h("td", { "data-label": adminText("admin.customer.session.started") }, h("time", { datetime: s.createdAt }, formatDateTime(s.createdAt))),
    h("td", { "data-label": adminText("admin.customer.session.lastSeen") }, h("time", { datetime: s.lastSeenAt }, formatDateTime(s.lastSeenAt))),
    h("td", { "data-label": adminText("admin.customer.session.expires") }, h("time", { datetime: s.expiresAt }, formatDateTime(s.expiresAt))),
    h("td", { "data-label": adminText("admin.customer.session.agent") }, s.userAgent ?? none()),
    h("td", { "data-label": adminText("admin.customer.session.address") }, s.address ?? none()))

const subscriptionRow = (s: Subscription) =>
  h("tr", { "data-testid": "admin-subscription", "data-subscription": s.id },
    h("td", { "data-label": adminText("admin.customer.sub.plan") }, s.planId),
    h("td", { "data-label": adminText("admin.customer.sub.kind") }, kindName(s.kind)),
    h("td", { "data-label": adminText("admin.customer.sub.state") }, stateBadge(s.status)),
    h("td", { "data-label": adminText("admin.customer.sub.periodEnd") }, h("time", { datetime: s.currentPeriodEnd }, formatDate(s.currentPeriodEnd))),
    h("td", { "data-label": adminText("admin.customer.sub.service") },
      link(`/admin/services/${encodeURIComponent(s.id)}`, s.serviceId ?? s.id, { "data-testid": "admin-subscription-open" })))

const billingFacts = (profile: StaffCustomerPage["billingProfile"]) => {
  if (profile === null) return h("p", { class: "muted", "data-testid": "admin-customer-no-billing" }, adminText("admin.customer.noBilling"))
  const a = profile.address
  const facts: Array<[string, string]> = [
    [adminText("admin.customers.name"), profile.name],
    [adminText("admin.customers.company"), profile.companyName ?? none()],
    [adminText("admin.customer.address"), [a.line1, a.line2, `${a.postcode} ${a.city}`, a.country].filter((x) => x !== undefined && x !== "").join(", ")],
    [adminText("admin.customer.vatNumber"), profile.vatNumber ?? none()]
  ]
  return h("dl", { class: "facts", "data-testid": "admin-customer-billing-facts" }, facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))
}

type InvoicePage = StaffCustomerPage["invoices"]

const invoiceRow = (i: InvoicePage["invoices"][number]) =>
  h("tr", { "data-testid": "admin-invoice", "data-invoice": i.id },
    cell(t("invoices.number"), i.number),
    cell(t("invoices.kind"), t(`invoices.kind.${i.kind}`)),
    cell(t("invoices.date"), h("time", { datetime: i.issuedAt }, formatDate(i.issuedAt))),
    cell(t("invoices.totalExcl"), formatPrice(i.totalExcludingVatCents)),
    cell(t("invoices.total"), formatPrice(i.totalIncludingVatCents)))

/** The customer's invoices and credit notes, newest first, older ones a page at a time (keyset). */
const invoicesSection = (customerId: string, first: InvoicePage): HTMLElement =>
  pagedSection({
    title: adminText("admin.customer.invoices"),
    testid: "admin-invoices",
    headings: [t("invoices.number"), t("invoices.kind"), t("invoices.date"), t("invoices.totalExcl"), t("invoices.total")],
    empty: adminText("admin.customer.noInvoices"),
    more: adminText("admin.customer.moreInvoices"),
    first: { rows: first.invoices, next: first.next },
    row: invoiceRow,
    after: async (next) => {
      const page = await api.get<InvoicePage>(`/api/admin/customers/${encodeURIComponent(customerId)}/invoices?after=${encodeURIComponent(next)}`)
      return { rows: page.invoices, next: page.next }
    }
  })

type OrderPage = StaffCustomerPage["orders"]

const orderRow = (isAdmin: boolean, reload: () => void) => (o: OrderPage["orders"][number]) =>
  h("tr", { "data-testid": "admin-order", "data-order": o.id, "data-status": o.status },
    cell(opsText("ops.customerOrders.order"), h("code", {}, o.id)),
    cell(opsText("ops.customerOrders.status"), stateBadge(o.status)),
    cell(opsText("ops.orders.plan"), `${o.planId} (${kindName(o.kind)})`),
    cell(opsText("ops.orders.step"), `${o.progress.step}/${o.progress.total} ${stepName(o.kind, o.progress.step, o.progress.name)}`,
      o.failureReason === undefined ? null : h("div", { class: "muted" }, o.failureReason)),
    cell(opsText("ops.customerOrders.created"), h("time", { datetime: o.createdAt }, formatDateTime(o.createdAt))),
    cell(opsText("ops.customerOrders.paid"), o.paidAt === undefined ? none() : h("time", { datetime: o.paidAt }, formatDateTime(o.paidAt))),
    cell(opsText("ops.customerOrders.retry"), retryPart(o, isAdmin, reload),
      ...(o.subscriptionId === undefined ? [] : [" ", link(`/admin/services/${encodeURIComponent(o.subscriptionId)}`, opsText("ops.orders.service"))])))

/** The customer's orders, newest first, older ones a page at a time (keyset); an admin retries a failed one here. */
const ordersSection = (customerId: string, first: OrderPage, isAdmin: boolean, reload: () => void): HTMLElement =>
  pagedSection({
    title: opsText("ops.customerOrders.title"),
    testid: "admin-orders",
    headings: [opsText("ops.customerOrders.order"), opsText("ops.customerOrders.status"), opsText("ops.orders.plan"), opsText("ops.orders.step"),
      opsText("ops.customerOrders.created"), opsText("ops.customerOrders.paid"), opsText("ops.customerOrders.retry")],
    empty: opsText("ops.customerOrders.none"),
    more: opsText("ops.customerOrders.more"),
    first: { rows: first.orders, next: first.next },
    row: orderRow(isAdmin, reload),
    after: async (next) => {
      const page = await api.get<OrderPage>(`/api/admin/customers/${encodeURIComponent(customerId)}/orders?after=${encodeURIComponent(next)}`)
      return { rows: page.orders, next: page.next }
    }
  })

const profileFacts = (u: User) => {
  const facts: Array<[string, string]> = [
    [adminText("admin.customers.email"), u.email],
    [adminText("admin.customer.type"), adminText(`admin.customer.type.${u.accountType}`)],
    [adminText("admin.customers.company"), u.companyName ?? none()],
    [adminText("admin.customers.siret"), u.siret ?? none()],
    [adminText("admin.customers.role"), roleText(u.role)],
    [adminText("admin.customer.language"), adminText(`admin.customer.language.${u.language}`)],
    [adminText("admin.customers.since"), formatDateTime(u.createdAt)]
  ]
  return h("dl", { class: "facts", "data-testid": "admin-customer-facts" }, facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))
}

export const customerView: View = async (ctx) => {
  const { alive, params, root, user } = ctx
  const id = params["id"] ?? ""
  const errors = errorBox("admin-customer-error")
  root.append(link("/admin/customers", adminText("admin.customer.back")), loading())
  let page: StaffCustomerPage
  try {
    page = await api.get<StaffCustomerPage>(`/api/admin/customers/${encodeURIComponent(id)}`)
  } catch (error) {
    if (!alive()) return
    setAdminTitle(adminText("admin.customers.title"))
    errors.show(error)
    root.replaceChildren(h("h1", {}, adminText("admin.customers.title")), errors.el)
    return
  }
  if (!alive()) return
  const c = page.customer
  setAdminTitle(adminText("admin.customer.title", { name: fullName(c) }))
  const endSessions = user?.role === "admin"
    ? h("button", { type: "button", class: "danger-outline", "data-testid": "admin-end-sessions" }, adminText("admin.customer.endSessions"))
    : null
  const sessionsBody = h("div", {},
    page.sessions.length === 0
      ? h("p", { class: "muted" }, adminText("admin.customer.noSessions"))
      : table([adminText("admin.customer.session.started"), adminText("admin.customer.session.lastSeen"), adminText("admin.customer.session.expires"),
        adminText("admin.customer.session.agent"), adminText("admin.customer.session.address")], page.sessions.map(sessionRow), "admin-sessions"))
  if (endSessions !== null) endSessions.addEventListener("click", () => {
    void (async () => {
      if (!(await confirmDialog(adminText("admin.customer.confirmEndSessions", { email: c.email }), { danger: true, confirmLabel: adminText("admin.customer.endSessions") }))) return
      await run(endSessions, async () => {
        await api.post(`/api/admin/customers/${encodeURIComponent(c.id)}/logout-all`)
        sessionsBody.replaceChildren(h("p", { class: "muted" }, adminText("admin.customer.noSessions")))
      }, { success: adminText("admin.customer.sessionsEnded"), errors })
    })()
  })
  root.replaceChildren(
    link("/admin/customers", adminText("admin.customer.back")),
    " · ",
    link(`/admin/payments/${encodeURIComponent(c.id)}`, opsText("ops.service.payments"), { "data-testid": "admin-customer-payments" }),
    h("div", { class: "page-head" }, h("h1", { "data-testid": "admin-customer-name" }, adminText("admin.customer.title", { name: fullName(c) })),
      link(`/admin/customers/${encodeURIComponent(c.id)}/view-as`, adminText("admin.viewAs.open"), { class: "button", "data-testid": "admin-view-as" })),
    errors.el,
    h("div", { class: "stack" },
      section(adminText("admin.customer.profile"), "admin-customer-profile", profileFacts(c)),
      section(adminText("admin.customer.billing"), "admin-customer-billing", billingFacts(page.billingProfile)),
      section(adminText("admin.customer.sessions"), "admin-customer-sessions", sessionsBody, endSessions),
      section(adminText("admin.customer.subscriptions"), "admin-customer-subscriptions",
        page.subscriptions.length === 0
          ? h("p", { class: "muted" }, adminText("admin.customer.noSubscriptions"))
          : table([adminText("admin.customer.sub.plan"), adminText("admin.customer.sub.kind"), adminText("admin.customer.sub.state"),
            adminText("admin.customer.sub.periodEnd"), adminText("admin.customer.sub.service")], page.subscriptions.map(subscriptionRow), "admin-subscriptions")),
      ordersSection(c.id, page.orders, user?.role === "admin", () => {
        root.replaceChildren()
        void customerView(ctx)
      }),
      invoicesSection(c.id, page.invoices),
      auditSection(c.id, page.audit)))
}
