// Thin handlers for the back-office and the customer's own security events: one use case each, errors in one table.
import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { SessionRecord } from "../../domain/account/SessionRecord.ts"
import { UserId } from "../../domain/account/User.ts"
import type { AuditEvent } from "../../domain/audit/AuditEvent.ts"
import { type AuditPage, auditPage, securityEvents } from "../../domain/backoffice/auditTrail.ts"
import { catalogOverview, setPlanOnSale } from "../../domain/backoffice/catalog.ts"
import { dashboard } from "../../domain/backoffice/dashboard.ts"
import { viewAsCustomer } from "../../domain/backoffice/viewAs.ts"
import { withdrawableUntil } from "../../domain/billing/withdrawal.ts"
import type { Order } from "../../domain/billing/Billing.ts"
import type { Invoice } from "../../domain/billing/invoicing/Invoice.ts"
import {
  customerInvoices,
  customerOrders,
  customerPage,
  endCustomerSessions,
  INVOICE_PAGE,
  ORDER_PAGE,
  searchCustomers
} from "../../domain/backoffice/customers.ts"
import { CurrentSession } from "./AccountsApi.ts"
import { userView } from "./AccountsHandlers.ts"
import { staffOrderView } from "./AdminOperationsHandlers.ts"
import { Api } from "./Api.ts"
import { mapDomainErrors } from "./errorMapping.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { currentOperator, withServices } from "./operator.ts"
import { gameServerView } from "./GameHandlers.ts"
import { billingProfileView, invoiceView } from "./InvoicingHandlers.ts"
import { listedView, renewalView, subscriptionView, vpsView } from "./ServicesHandlers.ts"

const DEFAULT_PAGE = 50

const auditEventView = (e: AuditEvent) => ({
  id: e.id,
  at: e.at.toISOString(),
  actorId: e.actorId,
  actorRole: e.actorRole,
  action: e.action,
  subjectUserId: e.subjectUserId,
  target: e.target,
  address: e.address,
  before: e.before,
  after: e.after,
  details: e.details
})

const pageView = <A>(page: AuditPage, view: (e: AuditEvent) => A) => ({
  events: page.events.map(view),
  ...(page.next === undefined ? {} : { next: page.next })
})

/** A customer sees who acted on their account in broad terms: never an operator's identity. */
const securityEventView = (e: AuditEvent) => ({
  id: e.id,
  at: e.at.toISOString(),
  action: e.action,
  by: e.actorRole === "support" || e.actorRole === "admin"
    ? e.actorId === e.subjectUserId ? "you" as const : "operator" as const
    : e.actorRole === "system" ? "platform" as const : e.actorRole === "anonymous" ? "anonymous" as const : "you" as const,
  address: e.address,
  details: e.details
})


const invoicePageView = (page: { readonly invoices: ReadonlyArray<Invoice>; readonly next: string | null }) => ({
  invoices: page.invoices.map(invoiceView),
  ...(page.next === null ? {} : { next: page.next })
})

const orderPageView = (page: { readonly orders: ReadonlyArray<{ readonly order: Order; readonly paidAt: Option.Option<Date> }>; readonly next: string | null }) => ({
  orders: page.orders.map(({ order, paidAt }) => ({
    ...staffOrderView(order),
    ...Option.match(paidAt, { onNone: () => ({}), onSome: (at) => ({ paidAt: at.toISOString() }) })
  })),
  ...(page.next === null ? {} : { next: page.next })
})

const sessionView = (s: SessionRecord) => ({
  id: s.id,
  createdAt: s.createdAt.toISOString(),
  lastSeenAt: s.lastSeenAt.toISOString(),
  expiresAt: s.expiresAt.toISOString(),
  rememberMe: s.rememberMe,
  userAgent: s.userAgent,
  address: s.address
})

export const AdminAuditHandlers = HttpApiBuilder.group(Api, "adminAudit", Effect.fn(function*(handlers) {
  const run = yield* withServices<Effect.Services<ReturnType<typeof auditPage>>>()
  return handlers.handle("list", ({ query }) =>
    run(auditPage({
      subjectUserId: query.user === undefined ? undefined : UserId.make(query.user),
      actorId: query.actor === undefined ? undefined : UserId.make(query.actor),
      actions: query.action === undefined ? undefined : [query.action],
      before: query.before,
      limit: query.limit ?? DEFAULT_PAGE
    })).pipe(Effect.map((page) => pageView(page, auditEventView)), mapDomainErrors))
}))

export const AdminCustomersHandlers = HttpApiBuilder.group(Api, "adminCustomers", Effect.fn(function*(handlers) {
  const operator = currentOperator(yield* HttpSettings)
  const run = yield* withServices<
    | Effect.Services<ReturnType<typeof searchCustomers>>
    | Effect.Services<ReturnType<typeof customerPage>>
    | Effect.Services<ReturnType<typeof endCustomerSessions>>
    | Effect.Services<ReturnType<typeof viewAsCustomer>>
    | Effect.Services<ReturnType<typeof customerInvoices>>
    | Effect.Services<ReturnType<typeof customerOrders>>
  >()
  return handlers
    .handle("search", ({ query }) =>
      run(searchCustomers(query.q)).pipe(Effect.map((users) => ({ customers: users.map((u) => userView(u)) })), mapDomainErrors))
    .handle("get", ({ params }) =>
      Effect.flatMap(operator, (who) => run(customerPage(who, UserId.make(params.id)))).pipe(
        Effect.map((page) => ({
          customer: userView(page.customer),
          sessions: page.sessions.map(sessionView),
          subscriptions: page.subscriptions.map(subscriptionView),
          audit: pageView(page.audit, auditEventView),
          billingProfile: Option.match(page.billingProfile, { onNone: () => null, onSome: (p) => billingProfileView(p, true) }),
          invoices: invoicePageView(page.invoices),
          orders: orderPageView(page.orders)
        })),
        mapDomainErrors
      ))
    .handle("invoices", ({ params, query }) =>
      run(customerInvoices(UserId.make(params.id), query.after, query.limit ?? INVOICE_PAGE)).pipe(Effect.map(invoicePageView), mapDomainErrors))
    .handle("orders", ({ params, query }) =>
      run(customerOrders(UserId.make(params.id), query.after, query.limit ?? ORDER_PAGE)).pipe(Effect.map(orderPageView), mapDomainErrors))
    .handle("viewAs", ({ params }) =>
      Effect.flatMap(operator, (who) => run(viewAsCustomer(who, UserId.make(params.id)))).pipe(
        Effect.flatMap((seen) => Effect.map(Clock.currentTimeMillis, (now) => ({ seen, now }))),
        Effect.map(({ seen, now }) => ({
          customer: userView(seen.customer),
          // As their panel lists them, the withdrawal deadline included.
          subscriptions: seen.subscriptions.map((listed) =>
            listedView(listed.subscription, listed.service, withdrawableUntil(listed.subscription, seen.customer.accountType, now))),
          // The pay link is the customer's to follow, not the operator's.
          renewals: seen.renewals.map((r) => ({ ...renewalView(r), payUrl: null })),
          vps: seen.vps.map(vpsView),
          gameServers: seen.gameServers.map(gameServerView),
          invoices: seen.invoices.map(invoiceView)
        })),
        mapDomainErrors
      ))
    .handle("endSessions", ({ params }) =>
      Effect.flatMap(operator, (who) => run(endCustomerSessions(who, UserId.make(params.id)))).pipe(mapDomainErrors))
}))

type Overview = Effect.Success<typeof catalogOverview>

const adminPlanView = (plan: Overview["plans"][number]) => {
  const { id, kind, name, priceCents, retired, onSale } = plan
  return plan.kind === "vps"
    ? { id, kind, name, priceCents, retired, onSale, vcpu: plan.vcpu, ramMiB: plan.ramMiB, diskGiB: plan.diskGiB, templates: plan.templates }
    : { id, kind, name, priceCents, retired, onSale, panel: plan.panel, memoryMiB: plan.memoryMiB, diskMiB: plan.diskMiB, cpuPercent: plan.cpuPercent }
}

const catalogView = (overview: Overview) => ({
  plans: overview.plans.map(adminPlanView),
  templates: overview.templates,
  pools: overview.pools,
  clusters: overview.clusters.map(({ name, url, retired }) => ({ name, url, retired })),
  panels: overview.panels.map(({ name, url, retired }) => ({ name, url, retired }))
})

export const AdminCatalogHandlers = HttpApiBuilder.group(Api, "adminCatalog", Effect.fn(function*(handlers) {
  const operator = currentOperator(yield* HttpSettings)
  const run = yield* withServices<Effect.Services<typeof catalogOverview> | Effect.Services<ReturnType<typeof setPlanOnSale>>>()
  return handlers
    .handle("get", () => run(catalogOverview).pipe(Effect.map(catalogView), mapDomainErrors))
    .handle("setPlanSale", ({ params, payload }) =>
      Effect.flatMap(operator, (who) => run(setPlanOnSale(who, params.id, payload.onSale))).pipe(mapDomainErrors))
}))

type Dashboard = Effect.Success<typeof dashboard>

const dashboardView = (d: Dashboard) => ({
  ...d,
  day: { start: d.day.start.toISOString(), end: d.day.end.toISOString() },
  openRefunds: { ...d.openRefunds, oldestSince: d.openRefunds.oldestSince?.toISOString() ?? null }
})

export const AdminDashboardHandlers = HttpApiBuilder.group(Api, "adminDashboard", Effect.fn(function*(handlers) {
  const run = yield* withServices<Effect.Services<typeof dashboard>>()
  return handlers.handle("get", () => run(dashboard).pipe(Effect.map(dashboardView), mapDomainErrors))
}))

export const SecurityEventsHandlers = HttpApiBuilder.group(Api, "securityEvents", Effect.fn(function*(handlers) {
  const run = yield* withServices<Effect.Services<ReturnType<typeof securityEvents>>>()
  return handlers.handle("list", ({ query }) =>
    Effect.flatMap(CurrentSession, (session) =>
      run(securityEvents(session.user.id, { before: query.before, limit: query.limit ?? DEFAULT_PAGE }))).pipe(
        Effect.map((page) => pageView(page, securityEventView)),
        mapDomainErrors
      ))
}))
