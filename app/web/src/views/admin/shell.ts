// The back-office's shell: its pages in one list (path, view, navigation label, least role), each drawn under the
// back-office's own navigation, and only for staff. Anyone else gets the panel's "not found" page at these addresses
// (the API refuses them anyway): a customer learns nothing of what exists here.
// A new page is one line of `adminPages`.
import type { User } from "../../api.ts"
import { route, type Route, type View } from "../../app.ts"
import { h } from "../../dom.ts"
import { notFoundView } from "../notFound.ts"
import { catalogView } from "./catalog.ts"
import { adminDashboardView } from "./dashboard.ts"
import { customerView, customersView } from "./customers.ts"
import { ordersView } from "./orders.ts"
import { opsText } from "./opsTexts.ts"
import { paymentsSearchView, paymentsView } from "./payments.ts"
import { servicesView, serviceView } from "./services.ts"
import { adminText } from "./texts.ts"
import { viewAsView } from "./viewAs.ts"

export interface AdminPage {
  /** The address, with `:name` parameters (as the panel's routes). */
  readonly path: string
  readonly view: View
  /** Its entry in the back-office's navigation (in the current language); pages reached from another have none. */
  readonly nav?: () => string
  /** The least role that may open it (support when unsaid, as the API's RequiredRole). */
  readonly role?: "admin"
}

export const adminPages: ReadonlyArray<AdminPage> = [
  { path: "/admin", view: adminDashboardView, nav: () => adminText("admin.nav.dashboard") },
  { path: "/admin/customers", view: customersView, nav: () => adminText("admin.nav.customers") },
  { path: "/admin/customers/:id", view: customerView },
  { path: "/admin/customers/:id/view-as", view: viewAsView },
  { path: "/admin/catalog", view: catalogView, nav: () => adminText("admin.nav.catalog") },
  { path: "/admin/services", view: servicesView, nav: () => opsText("ops.nav.services") },
  { path: "/admin/services/:id", view: serviceView },
  { path: "/admin/orders", view: ordersView, nav: () => opsText("ops.nav.orders") },
  { path: "/admin/payments", view: paymentsSearchView, nav: () => opsText("ops.nav.payments") },
  { path: "/admin/payments/:id", view: paymentsView }
]

export const isStaff = (user: User | null): boolean => user?.role === "support" || user?.role === "admin"

const mayOpen = (user: User | null, page: AdminPage) => page.role === "admin" ? user?.role === "admin" : isStaff(user)

const navigation = (user: User | null): HTMLElement => {
  const here = location.pathname
  const entries = adminPages.flatMap((page) =>
    page.nav === undefined || !mayOpen(user, page)
      ? []
      : [h("li", {}, h("a", {
        href: page.path,
        "data-testid": `admin-nav-${page.path === "/admin" ? "dashboard" : page.path.split("/").at(-1) ?? ""}`,
        ...(here === page.path || here.startsWith(`${page.path}/`) && page.path !== "/admin" ? { "aria-current": "page" } : {})
      }, page.nav()))])
  return h("nav", { class: "admin-nav", "aria-label": adminText("admin.nav.label"), "data-testid": "admin-nav" }, h("ul", {}, entries))
}

/** The page under the back-office's navigation, for staff allowed to open it; the panel's "not found" otherwise. */
const framed = (page: AdminPage): View => (ctx) => {
  if (!mayOpen(ctx.user, page)) return notFoundView(ctx)
  const body = h("div", { class: "admin-body" })
  ctx.root.append(navigation(ctx.user), body)
  return page.view({ ...ctx, root: body })
}

/** The back-office's routes for the panel's router: signed-in users only, then staff only. */
export const adminRoutes = (): ReadonlyArray<Route> => adminPages.map((page) => route(page.path, framed(page), "user"))
