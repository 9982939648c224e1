// The back-office's service page: our record beside the upstream's live state, the provisioning step by step, the
// reconciler's checks for this service, resuming a stuck provisioning (admin), and suspending it with a statement of
// reasons or lifting the suspension (GET/POST /api/admin/services/:id…). And a page that opens a service by its id.
import { api, type ServiceFindings, type StaffServicePage } from "../../api.ts"
import { link, navigate, type View } from "../../app.ts"
import { field, h } from "../../dom.ts"
import { formatDate, formatDateTime, stepName } from "../../i18n.ts"
import { confirmDialog, errorBox, loading, run, section, stateBadge, stateText } from "../../ui.ts"
import { none, setAdminTitle, table } from "./parts.ts"
import { type OpsKey, opsText } from "./opsTexts.ts"
import { retryPart } from "./orderRetry.ts"
import { kindName } from "./texts.ts"

const GROUNDS = ["terms_of_service", "illegal_content", "abuse", "security", "fraud"] as const

const facts = (pairs: ReadonlyArray<readonly [string, string]>, testid: string) =>
  h("dl", { class: "facts", "data-testid": testid }, pairs.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))

/** Opens a service by its subscription id. */
export const servicesView: View = ({ root }) => {
  setAdminTitle(opsText("ops.services.title"))
  const input = h("input", { type: "text", name: "id", required: true, pattern: "[0-9a-fA-F-]{36}", autocomplete: "off", "data-testid": "ops-service-id" })
  const form = h("form", { class: "inline-form", "data-testid": "ops-service-open" },
    field(opsText("ops.services.id"), input), h("button", { type: "submit", class: "primary" }, opsText("ops.services.open")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    navigate(`/admin/services/${encodeURIComponent(input.value.trim())}`)
  })
  root.append(h("h1", {}, opsText("ops.services.title")), h("p", { class: "hint" }, opsText("ops.services.hint")), form)
}

const upstreamPart = (page: StaffServicePage): HTMLElement => {
  const live = page.upstream
  if (live === null) return h("p", { class: "muted" }, opsText("ops.service.notBuilt"))
  if (!live.reachable) {
    return h("p", { class: "error-box", "data-testid": "ops-upstream-unavailable" }, opsText("ops.service.unreachable", { upstream: live.upstream, detail: live.detail }))
  }
  return h("div", { "data-testid": "ops-upstream", "data-state": live.state, "data-ownership": live.ownership },
    facts([
      [opsText("ops.service.upstream"), live.upstream],
      [opsText("ops.service.state"), stateText(live.state)],
      [opsText("ops.service.ownership"), opsText(`ops.service.ownership.${live.ownership}`)],
      ...live.facts.map((f) => [f.label, f.value] as const)
    ], "ops-upstream-facts"))
}

const provisioningPart = (page: StaffServicePage, isAdmin: boolean, reload: () => void): HTMLElement => {
  const p = page.provisioning
  if (p === null) return h("p", { class: "muted" }, none())
  const rows = p.steps.map((s, i) =>
    h("tr", { "data-testid": "ops-step", "data-state": s.state },
      h("td", { "data-label": opsText("ops.service.step") }, `${i + 1}. ${stepName(p.order.kind, i + 1, s.name)}`),
      h("td", { "data-label": opsText("ops.service.state") }, opsText(`ops.service.step.${s.state}`))))
  const part = h("div", {}, stateBadge(p.order.status, "ops-order-status"),
    p.order.failureReason === undefined ? null : h("p", { "data-testid": "ops-order-failure" }, opsText("ops.service.failure", { reason: p.order.failureReason })),
    h("p", {}, retryPart(p.order, isAdmin, reload)),
    table([opsText("ops.service.step"), opsText("ops.service.state")], rows, "ops-steps"))
  if (isAdmin && p.order.status === "provisioning") {
    const resume = h("button", { type: "button", class: "secondary", "data-testid": "ops-resume" }, opsText("ops.service.resume"))
    resume.addEventListener("click", () => {
      void run(resume, async () => {
        await api.post(`/api/admin/services/${encodeURIComponent(page.subscription.id)}/resume-provisioning`)
        reload()
      }, { success: opsText("ops.service.resumed") })
    })
    part.append(resume)
  }
  return part
}

const reconcilePart = (id: string): HTMLElement => {
  const results = h("ul", { "data-testid": "ops-findings" })
  const button = h("button", { type: "button", class: "secondary", "data-testid": "ops-reconcile" }, opsText("ops.service.reconcile"))
  button.addEventListener("click", () => {
    void run(button, async () => {
      const report = await api.post<ServiceFindings>(`/api/admin/services/${encodeURIComponent(id)}/reconcile`)
      results.replaceChildren(...(report.findings.length === 0
        ? [h("li", {}, opsText("ops.service.noFindings"))]
        : report.findings.map((f) => h("li", { "data-problem": f.problem }, opsText("ops.service.finding", f)))))
    })
  })
  return h("div", {}, button, results)
}

/** For an admin, on a held service: ending it for good (asked first), with the lift form's reason. */
const terminateButton = (id: string, reason: HTMLTextAreaElement, errors: ReturnType<typeof errorBox>, reload: () => void): HTMLElement => {
  const button = h("button", { type: "button", class: "danger-outline", "data-testid": "ops-terminate" }, opsText("ops.service.terminate"))
  button.addEventListener("click", () => {
    void (async () => {
      if (!reason.reportValidity()) return
      if (!(await confirmDialog(opsText("ops.service.confirmTerminate"), { danger: true, confirmLabel: opsText("ops.service.terminate") }))) return
      await run(button, async () => {
        await api.post(`/api/admin/services/${id}/terminate`, { reason: reason.value.trim() })
        reload()
      }, { errors, success: opsText("ops.service.terminated") })
    })()
  })
  return button
}

const holdPart = (page: StaffServicePage, isAdmin: boolean, reload: () => void): HTMLElement => {
  const errors = errorBox("ops-hold-error")
  const id = encodeURIComponent(page.subscription.id)
  const hold = page.hold
  if (hold !== null) {
    const reason = h("textarea", { name: "reason", required: true, minlength: 3, maxlength: 500, rows: 2, "data-testid": "ops-unsuspend-reason" })
    const form = h("form", { "data-testid": "ops-unsuspend-form" },
      field(opsText("ops.service.reason"), reason), errors.el, h("button", { type: "submit", class: "primary" }, opsText("ops.service.unsuspend")),
      isAdmin && page.subscription.status !== "terminated" ? [" ", terminateButton(id, reason, errors, reload)] : [])
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      void run(form, async () => {
        await api.post(`/api/admin/services/${id}/unsuspend`, { reason: reason.value.trim() })
        reload()
      }, { errors, success: opsText("ops.service.unsuspended") })
    })
    return h("div", {},
      h("p", { "data-testid": "ops-held" },
        opsText("ops.service.held", { date: formatDateTime(hold.placedAt), facts: hold.facts, ground: opsText(`ops.ground.${hold.ground}`) })),
      form)
  }
  const statement = h("textarea", { name: "facts", required: true, minlength: 3, maxlength: 2000, rows: 4, "data-testid": "ops-suspend-facts" })
  const ground = h("select", { name: "ground", "data-testid": "ops-suspend-ground" },
    GROUNDS.map((g) => h("option", { value: g }, opsText(`ops.ground.${g}`))))
  const form = h("form", { "data-testid": "ops-suspend-form" },
    h("p", { class: "muted" }, opsText("ops.service.notHeld")),
    field(opsText("ops.service.facts"), statement), field(opsText("ops.service.ground"), ground), errors.el,
    h("button", { type: "submit", class: "danger" }, opsText("ops.service.suspend")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(form, async () => {
      await api.post(`/api/admin/services/${id}/suspend`, { facts: statement.value.trim(), ground: ground.value })
      reload()
    }, { errors, success: opsText("ops.service.suspended") })
  })
  return form
}

export const serviceView: View = async (ctx) => {
  const { alive, params, root, user } = ctx
  const id = params["id"] ?? ""
  const errors = errorBox("ops-service-error")
  setAdminTitle(opsText("ops.service.title", { id }))
  root.append(loading())
  let page: StaffServicePage
  try {
    page = await api.get<StaffServicePage>(`/api/admin/services/${encodeURIComponent(id)}`)
  } catch (error) {
    if (!alive()) return
    errors.show(error)
    root.replaceChildren(h("h1", {}, opsText("ops.services.title")), errors.el)
    return
  }
  if (!alive()) return
  const reload = () => {
    root.replaceChildren()
    void serviceView(ctx)
  }
  const s = page.subscription
  const ours: Array<readonly [string, string]> = [
    [opsText("ops.service.plan"), `${s.planId} (${kindName(s.kind)})`],
    [opsText("ops.service.status"), stateText(s.status)],
    [opsText("ops.service.periodEnd"), formatDate(s.currentPeriodEnd)],
    ...(page.service === null
      ? [[opsText("ops.service.state"), opsText("ops.service.notBuilt")] as const]
      : [[opsText("ops.service.name"), page.service.name] as const, [opsText("ops.service.address"), page.service.address || none()] as const,
        [opsText("ops.service.state"), stateText(page.service.state)] as const])
  ]
  const key = (k: OpsKey) => opsText(k)
  root.replaceChildren(
    h("h1", {}, opsText("ops.service.title", { id: page.service?.name ?? s.id })),
    h("p", {}, link(`/admin/customers/${encodeURIComponent(page.customerId)}`, key("ops.service.customer")), " · ",
      link(`/admin/payments/${encodeURIComponent(page.customerId)}`, key("ops.service.payments"))),
    h("div", { class: "stack" },
      section(key("ops.service.ours"), "ops-service-ours", facts(ours, "ops-ours-facts")),
      section(key("ops.service.live"), "ops-service-live", upstreamPart(page)),
      section(key("ops.service.workflow"), "ops-service-workflow", provisioningPart(page, user?.role === "admin", reload)),
      section(key("ops.service.reconcile"), "ops-service-reconcile", reconcilePart(s.id)),
      section(key("ops.service.hold"), "ops-service-hold", holdPart(page, user?.role === "admin", reload))))
}
