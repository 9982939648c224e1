// Small shared pieces of the views: inline error boxes, state badges, a confirmation dialog, async buttons.
import { errorText } from "./api.ts"
import { announce } from "./app.ts"
import { h, setBusy } from "./dom.ts"
import { hasKey, t } from "./i18n.ts"

/** An inline error area for a form or section (role=alert: read out when it fills). */
export const errorBox = (testid: string): { readonly el: HTMLElement; show(error: unknown): void; clear(): void } => {
  const el = h("div", { class: "error-box", role: "alert", "data-testid": testid, hidden: true })
  return {
    el,
    show(error) {
      el.textContent = errorText(error)
      el.hidden = false
    },
    clear() {
      el.textContent = ""
      el.hidden = true
    }
  }
}

/** A state's name in the current language ("running" → "En marche"); a state without words stays as it is. */
export const stateText = (state: string): string => {
  const key = `state.${state}`
  return hasKey(key) ? t(key) : state
}

export const stateBadge = (state: string, testid?: string): HTMLElement =>
  h("span", { class: `badge badge-${state}`, "data-testid": testid, "data-state": state }, stateText(state))

/**
 * Runs an action for a button or form: busy while it runs, its error shown in `errors` (or announced), its
 * success message announced. Returns whether it succeeded.
 */
export const run = async (
  target: Element,
  action: () => Promise<void>,
  options: { errors?: ReturnType<typeof errorBox>; success?: string } = {}
): Promise<boolean> => {
  options.errors?.clear()
  setBusy(target, true)
  try {
    await action()
    if (options.success !== undefined) announce(options.success)
    return true
  } catch (error) {
    if (options.errors !== undefined) options.errors.show(error)
    else announce(errorText(error), "error")
    return false
  } finally {
    setBusy(target, false)
  }
}

/** A modal confirmation (<dialog>: focus stays inside, Escape cancels). Resolves with the user's answer. */
export const confirmDialog = (
  message: string,
  options: { confirmLabel?: string; danger?: boolean; extra?: HTMLElement } = {}
): Promise<boolean> =>
  new Promise((resolve) => {
    const ok = h("button", { type: "submit", value: "ok", class: options.danger ? "danger" : "primary", "data-testid": "confirm-ok" },
      options.confirmLabel ?? t("common.yes"))
    const cancel = h("button", { type: "submit", value: "cancel", "data-testid": "confirm-cancel" }, t("common.cancel"))
    const text = h("p", { id: "confirm-text" }, message)
    const dialog = h("dialog", { class: "dialog", "aria-labelledby": "confirm-text", "data-testid": "confirm-dialog" },
      h("form", { method: "dialog" }, text, options.extra, h("div", { class: "row end" }, cancel, ok)))
    document.body.append(dialog)
    dialog.addEventListener("close", () => {
      const answer = dialog.returnValue === "ok"
      dialog.remove()
      resolve(answer)
    })
    dialog.showModal()
    cancel.focus()
  })

/** A modal prompt for one line of text; resolves with the value, or null when cancelled. */
export const promptDialog = (label: string, initial = "", testid = "prompt-input"): Promise<string | null> =>
  new Promise((resolve) => {
    const input = h("input", { type: "text", id: "prompt-input", value: initial, required: true, "data-testid": testid })
    const ok = h("button", { type: "submit", value: "ok", class: "primary", "data-testid": "prompt-ok" }, t("common.save"))
    const cancel = h("button", { type: "button", "data-testid": "prompt-cancel" }, t("common.cancel"))
    const form = h("form", { method: "dialog" },
      h("div", { class: "field" }, h("label", { for: "prompt-input" }, label), input),
      h("div", { class: "row end" }, cancel, ok))
    const dialog = h("dialog", { class: "dialog", "aria-label": label }, form)
    cancel.addEventListener("click", () => dialog.close("cancel"))
    document.body.append(dialog)
    dialog.addEventListener("close", () => {
      const value = dialog.returnValue === "ok" ? input.value.trim() : ""
      dialog.remove()
      resolve(value === "" ? null : value)
    })
    dialog.showModal()
    input.focus()
    input.select()
  })

export const section = (title: string, testid: string, ...children: Array<Node | null | undefined | false>): HTMLElement => {
  const id = `${testid}-title`
  return h("section", { class: "card", "aria-labelledby": id, "data-testid": testid }, h("h2", { id }, title), ...children)
}

export const loading = (): HTMLElement => h("p", { class: "muted", role: "status" }, t("common.loading"))
