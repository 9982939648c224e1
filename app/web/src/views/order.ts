// Ordering: the plans on sale (GET /api/plans), the options of the chosen one (VPS: OS template, host name, SSH
// key; game: the plan's user variables), payment through the gateway, then the provisioning progress polled from
// GET /api/orders/:id: awaiting payment (with the provider's page while it is open) or expired, then a progress bar
// over the named steps, the failure reason, the VPS root password once.
import { api, ApiError, type BillingProfile, errorText, type GamePlan, type Order, type Plan, type Plans, type VpsPlan } from "../api.ts"
import { announce, link, navigate, setTitle, type View } from "../app.ts"
import { field, h } from "../dom.ts"
import { formatDateTime, formatMiB, formatPrice, hasKey, plural, stepName, t } from "../i18n.ts"
import { isSandbox } from "../platform.ts"
import { shownPrice } from "../prices.ts"
import { errorBox, loading, run, section } from "../ui.ts"
import { profileForm } from "./invoices.ts"

const spec = (plan: Plan): string =>
  plan.kind === "vps"
    ? t("order.vpsSpec", { vcpu: plan.vcpu, ram: formatMiB(plan.ramMiB), disk: formatMiB(plan.diskGiB * 1024), snapshots: plural("order.snapshots", plan.snapshotLimit) })
    : t("order.gameSpec", {
      ram: formatMiB(plan.memoryMiB),
      disk: formatMiB(plan.diskMiB),
      cpu: plan.cpuPercent === 0 ? "∞" : `${plan.cpuPercent} %`,
      backups: plural("order.backups", plan.backups)
    })

const planCard = (audience: Plans["audience"]) => (plan: Plan): HTMLElement =>
  h("li", { class: "plan card", "data-testid": `plan-${plan.id}` },
    h("h3", {}, plan.name),
    h("p", { class: "price", "data-testid": `plan-price-${plan.id}` }, t("common.perMonth", { price: shownPrice(plan, audience) })),
    h("p", { class: "muted" }, spec(plan)),
    link(`/order/${encodeURIComponent(plan.id)}`, t("order.choose"), {
      class: "button primary",
      "aria-label": `${t("order.choose")} ${plan.name}`,
      "data-testid": `plan-choose-${plan.id}`
    }))

export const plansView: View = async ({ root, alive }) => {
  setTitle("order.title")
  root.append(h("h1", {}, t("order.title")))
  const body = h("div", { class: "stack" }, loading())
  root.append(body)
  const errors = errorBox("plans-error")
  try {
    const { audience, plans } = await api.get<Plans>("/api/plans")
    if (!alive()) return
    const vps = plans.filter((p): p is VpsPlan => p.kind === "vps")
    const games = plans.filter((p): p is GamePlan => p.kind === "game")
    body.replaceChildren(
      plans.length === 0 ? h("p", {}, t("order.noPlans")) : "",
      vps.length === 0 ? "" : section(t("order.vpsPlans"), "plans-vps", h("ul", { class: "plans" }, vps.map(planCard(audience)))),
      games.length === 0 ? "" : section(t("order.gamePlans"), "plans-game", h("ul", { class: "plans" }, games.map(planCard(audience))))
    )
  } catch (error) {
    errors.show(error)
    body.replaceChildren(errors.el)
  }
}

/** The field an INVALID_ORDER_OPTION names ("options.hostname: …"), to point at it. */
const invalidField = (error: unknown): string | undefined =>
  error instanceof ApiError && error.code === "INVALID_ORDER_OPTION" ? /^options\.([\w.]+):/.exec(error.message)?.[1] : undefined

export const orderFormView: View = async ({ root, params, alive, user }) => {
  const body = h("div", { class: "stack" }, loading())
  root.append(body)
  let plan: Plan | undefined
  let audience: Plans["audience"] = "anonymous"
  try {
    const listed = await api.get<Plans>("/api/plans")
    plan = listed.plans.find((p) => p.id === params["planId"])
    audience = listed.audience
  } catch (error) {
    if (!alive()) return
    body.replaceChildren(h("h1", {}, t("order.title")), h("div", { class: "error-box", role: "alert" }, errorText(error)))
    return
  }
  if (!alive()) return
  if (plan === undefined) {
    setTitle("order.title")
    body.replaceChildren(h("h1", {}, t("order.title")), h("div", { class: "error-box", role: "alert" }, t("err.PLAN_UNAVAILABLE")),
      link("/order", t("common.back")))
    return
  }
  const chosen = plan
  setTitle("order.configure", { plan: chosen.name })
  const errors = errorBox("order-error")
  const controls = new Map<string, { control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement; label: string }>()
  const fields: Array<HTMLElement> = []
  if (chosen.kind === "vps") {
    const template = h("select", { name: "templateId", required: true, "data-testid": "order-template" },
      chosen.templates.map((tpl) => h("option", { value: tpl.id }, tpl.name)))
    const hostname = h("input", { type: "text", name: "hostname", required: true, maxlength: 253, autocomplete: "off", spellcheck: "false",
      pattern: "[A-Za-z0-9]([A-Za-z0-9.\\-]*[A-Za-z0-9])?", "data-testid": "order-hostname" })
    const ssh = h("textarea", { name: "sshPublicKey", rows: 3, required: true, spellcheck: "false", "data-testid": "order-ssh-key" })
    controls.set("templateId", { control: template, label: t("order.template") })
    controls.set("hostname", { control: hostname, label: t("order.hostname") })
    controls.set("sshPublicKey", { control: ssh, label: t("order.sshKey") })
    fields.push(field(t("order.template"), template), field(t("order.hostname"), hostname, t("order.hostnameHint")),
      field(t("order.sshKey"), ssh, t("order.sshKeyHint")))
  } else if (chosen.userVariables.length > 0) {
    const inputs = chosen.userVariables.map((name) => {
      const input = h("input", { type: "text", name, maxlength: 191, "data-testid": `order-variable-${name}` })
      controls.set(`variables.${name}`, { control: input, label: name })
      return field(name, input)
    })
    fields.push(h("fieldset", {}, h("legend", {}, t("order.variables")), inputs))
  }
  // A consumer's express request to start before the withdrawal period ends: unticked, required (L221-25).
  const consumer = user?.accountType !== "professional"
  const expressStart = h("input", { type: "checkbox", id: "order-express-start", name: "expressStartConsent", required: true, "data-testid": "order-express-start" })
  const consent = consumer
    ? h("div", { class: "field checkbox" }, expressStart, h("label", { for: "order-express-start" }, t("order.expressStart")))
    : h("p", { class: "hint", "data-testid": "order-pro-note" }, t("order.expressStartProNote"))
  // The amount on the button is the amount the gateway will be asked for: the price including the customer's VAT.
  let payable = chosen.priceIncludingVatCents
  const priceLine = h("p", { class: "price", "data-testid": "order-price" }, t("common.perMonth", { price: shownPrice(chosen, audience) }))
  const submit = h("button", { type: "submit", class: "primary", "data-testid": "order-pay" }, t("order.pay", { price: formatPrice(payable) }))
  /** Once the billing profile is saved the price may change (another country, a VAT number): shown again. */
  const repriced = async (): Promise<boolean> => {
    const listed = await api.get<Plans>("/api/plans")
    const now = listed.plans.find((p) => p.id === chosen.id)
    if (now === undefined || now.priceIncludingVatCents === payable) return false
    payable = now.priceIncludingVatCents
    priceLine.textContent = t("common.perMonth", { price: shownPrice(now, listed.audience) })
    submit.textContent = t("order.pay", { price: formatPrice(payable) })
    return true
  }
  const form = h("form", { "data-testid": "order-form" }, ...fields, consent, isSandbox() ? h("p", { class: "muted" }, t("order.sandboxNote")) : null, h("p", { class: "hint" }, h("a", { href: "/legal/terms", "data-testid": "order-terms" }, t("order.termsLink"))), errors.el, submit)
  // Where the billing details are asked for when the order needs them (BILLING_PROFILE_REQUIRED): saved, the order goes on.
  const billing = h("section", { class: "card stack", "aria-labelledby": "order-billing-heading", "data-testid": "order-billing", hidden: true })
  const askBillingDetails = async () => {
    const profile = await api.get<BillingProfile>("/api/billing-profile")
    billing.replaceChildren(
      h("h2", { id: "order-billing-heading" }, t("invoices.profile")),
      h("p", { class: "notice" }, t("order.billingNeeded")),
      profileForm(profile, () => {
        billing.hidden = true
        billing.replaceChildren()
        errors.clear()
        // A price that changed is paid only once the customer has seen it and pressed the button again.
        void repriced().then((changed) => {
          if (changed) announce(t("order.repriced"))
          else form.requestSubmit()
        }, (error: unknown) => errors.show(error))
      }))
    billing.hidden = false
    billing.querySelector<HTMLInputElement>("input")?.focus()
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    for (const { control } of controls.values()) control.removeAttribute("aria-invalid")
    void run(form, async () => {
      const options: Record<string, unknown> = {}
      if (chosen.kind === "vps") {
        for (const key of ["templateId", "hostname", "sshPublicKey"]) options[key] = controls.get(key)!.control.value.trim()
      } else {
        const variables: Record<string, string> = {}
        for (const name of chosen.userVariables) {
          const value = controls.get(`variables.${name}`)!.control.value.trim()
          if (value !== "") variables[name] = value
        }
        if (Object.keys(variables).length > 0) options["variables"] = variables
      }
      try {
        const { order } = await api.post<{ order: Order }>("/api/orders", {
          planId: chosen.id,
          options,
          ...(consumer ? { expressStartConsent: expressStart.checked } : {})
        })
        // Paid on the provider's page, which sends the customer back to the order's page (paid or not).
        if (order.checkoutUrl !== undefined) window.location.assign(order.checkoutUrl)
        else navigate(`/orders/${encodeURIComponent(order.id)}`)
      } catch (error) {
        if (error instanceof ApiError && error.code === "BILLING_PROFILE_REQUIRED") {
          errors.show(error)
          await askBillingDetails()
          return
        }
        const name = invalidField(error)
        const target = name === undefined ? undefined : controls.get(name)
        if (target !== undefined) {
          target.control.setAttribute("aria-invalid", "true")
          errors.show(error)
          errors.el.append(" ", t("order.invalidField", { field: target.label }))
          target.control.focus()
          return
        }
        throw error
      }
    }, { errors })
  })
  body.replaceChildren(
    h("h1", {}, t("order.configure", { plan: chosen.name })),
    h("p", { class: "muted" }, spec(chosen)),
    priceLine,
    h("div", { class: "card" }, form),
    billing,
    h("p", {}, link("/order", t("common.back")))
  )
}

const orderStepName = (order: Order, step: number): string => stepName(order.kind, step, order.progress.name)

const POLL_MS = 1000

export const orderProgressView: View = ({ root, params, alive }) => {
  setTitle("order.progressTitle")
  const id = params["id"] ?? ""
  const bar = h("progress", { max: 1, value: 0, "aria-labelledby": "order-step", "data-testid": "order-progress" })
  const stepText = h("p", { id: "order-step", "data-testid": "order-step" }, t("common.loading"))
  const steps = h("ol", { class: "steps", "data-testid": "order-steps" })
  const outcome = h("div", { "aria-live": "polite", "data-testid": "order-outcome" })
  const errors = errorBox("order-progress-error")
  // Progress is announced politely each time the step changes; the bar itself is not a live region.
  const live = h("p", { class: "sr-only", "aria-live": "polite", "data-testid": "order-live" })
  root.append(h("h1", {}, t("order.progressTitle")),
    h("div", { class: "card stack", "data-testid": "order-status", "data-status": "pending" }, stepText, bar, steps, live, outcome, errors.el))
  const status = root.querySelector<HTMLElement>("[data-testid=order-status]")!
  let timer: number | undefined
  let lastStep = -1
  let rootPassword: string | undefined

  const draw = (order: Order) => {
    status.dataset["status"] = order.status
    const total = Math.max(order.progress.total, 1)
    const done = order.status === "completed" ? total : order.progress.step
    bar.max = total
    bar.value = order.status === "completed" ? total : Math.max(0, done - (order.status === "provisioning" ? 0.5 : 0))
    bar.setAttribute("aria-valuetext", t("order.progress", { step: done, total, name: orderStepName(order, order.progress.step) }))
    stepText.textContent = order.status === "completed"
      ? t("order.completed")
      : order.status === "awaiting_payment" || order.status === "expired"
      ? t(order.status === "expired" ? "order.expired" : "order.awaitingPayment")
      : t("order.progress", { step: order.progress.step, total, name: orderStepName(order, order.progress.step) })
    steps.replaceChildren(...Array.from({ length: order.progress.total }, (_, i) => {
      const n = i + 1
      const state = order.status === "completed" || n < order.progress.step ? "done" : n === order.progress.step ? (order.status === "failed" ? "failed" : "current") : "todo"
      return h("li", { class: `step step-${state}`, "data-state": state, ...(state === "current" ? { "aria-current": "step" } : {}) },
        hasKey(`step.${order.kind}.${n}`) ? t(`step.${order.kind}.${n}` as never) : `#${n}`)
    }))
    if (order.progress.step !== lastStep && order.status === "provisioning") {
      lastStep = order.progress.step
      live.textContent = stepText.textContent
    } else if (order.status !== "provisioning") {
      // Over (the outcome below says how, and is announced): a step left in the live region would read as current.
      live.textContent = ""
    }
    if (order.rootPassword !== undefined) rootPassword = order.rootPassword
    if (order.status === "completed") {
      // The panel has a page for the VPS and the game server; another product's service has none (yet).
      const pages: Readonly<Record<string, string>> = { vps: "/vps/", game: "/game/" }
      const page = pages[order.kind]
      const service = order.serviceId === undefined || page === undefined ? null : `${page}${encodeURIComponent(order.serviceId)}`
      outcome.replaceChildren(
        h("div", { class: "success-box", "data-testid": "order-completed" }, t("order.completed")),
        rootPassword === undefined ? "" : passwordBox(rootPassword),
        service === null ? "" : link(service, t("order.openService"), { class: "button primary", "data-testid": "order-open-service" })
      )
      announce(t("order.completed"))
    } else if (order.status === "awaiting_payment") {
      // Only the provider's confirmation moves the order on: until it comes, the page can still be paid.
      outcome.replaceChildren(h("div", { class: "card stack", "data-testid": "order-awaiting-payment" },
        order.retryOf === undefined ? "" : h("p", { "data-testid": "order-retry-of" }, t("order.retryOf", { id: order.retryOf })),
        h("p", {}, t("order.awaitingPayment")),
        order.expiresAt === undefined ? "" : h("p", { class: "muted" }, t("order.expiresAt", { at: formatDateTime(order.expiresAt) })),
        order.checkoutUrl === undefined ? "" : h("a", { href: order.checkoutUrl, class: "button primary", "data-testid": "order-pay-now" }, t("order.payNow"))))
    } else if (order.status === "expired") {
      outcome.replaceChildren(h("div", { class: "error-box", role: "status", "data-testid": "order-expired" },
        h("strong", {}, t("order.expired")), " ", link("/order", t("order.orderAgain"))))
    } else if (order.status === "failed") {
      outcome.replaceChildren(h("div", { class: "error-box", role: "alert", "data-testid": "order-failed" },
        h("strong", {}, t("order.failed")), " ",
        order.failureReason === undefined ? null : h("span", { "data-testid": "order-failure-reason" }, t("order.failureReason", { reason: order.failureReason }))))
    }
  }

  const poll = async () => {
    try {
      const order = await api.get<Order>(`/api/orders/${encodeURIComponent(id)}`)
      if (!alive()) return
      errors.clear()
      draw(order)
      if (order.status === "completed" || order.status === "failed" || order.status === "expired") return
    } catch (error) {
      if (!alive()) return
      errors.show(error)
      if (error instanceof ApiError && error.status === 404) return
    }
    timer = window.setTimeout(() => void poll(), POLL_MS)
  }
  void poll()
  return () => window.clearTimeout(timer)
}

/** The root password, shown once, with a copy button. */
export const passwordBox = (password: string): HTMLElement => {
  const code = h("code", { class: "secret", "data-testid": "root-password" }, password)
  const copy = h("button", { type: "button", "data-testid": "root-password-copy" }, t("order.copy"))
  copy.addEventListener("click", () => {
    void navigator.clipboard?.writeText(password).then(() => announce(t("order.copied")), () => undefined)
  })
  return h("div", { class: "password-box", role: "group", "aria-label": t("order.rootPassword") },
    h("strong", {}, `${t("order.rootPassword")} `), code, " ", copy,
    h("p", { class: "muted" }, t("order.rootPasswordNote")))
}
