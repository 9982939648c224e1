// A tiny element builder: h("button", { type: "button", onclick }, "Save"). Children are nodes or text (never
// parsed as HTML), so nothing the API returns can inject markup.

type Child = Node | string | number | null | undefined | false
type Handler<K extends keyof HTMLElementEventMap> = (event: HTMLElementEventMap[K]) => void

export type Attrs = {
  [key: string]: string | number | boolean | null | undefined | ((event: never) => void)
} & {
  onclick?: Handler<"click">
  onsubmit?: Handler<"submit">
  oninput?: Handler<"input">
  onchange?: Handler<"change">
  onkeydown?: Handler<"keydown">
}

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === "function") {
      el.addEventListener(name.slice(2), value as EventListener)
    } else if (name === "value" && "value" in el) {
      ;(el as HTMLInputElement).value = String(value)
    } else if (name === "checked" && el instanceof HTMLInputElement) {
      el.checked = Boolean(value)
    } else {
      el.setAttribute(name, value === true ? "" : String(value))
    }
  }
  append(el, children)
  return el
}

const append = (el: Element, children: ReadonlyArray<Child | ReadonlyArray<Child>>) => {
  for (const child of children) {
    if (Array.isArray(child)) append(el, child)
    else if (child instanceof Node) el.append(child)
    else if (child !== null && child !== undefined && child !== false) el.append(String(child))
  }
}

export const clear = (el: Element): void => el.replaceChildren()

/** Disables every button and input under a root for good (a panel whose server went away). */
export const disableControls = (root: Element): void => {
  for (const el of root.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input")) el.disabled = true
}

/** Disables every button, input, select and textarea under a root (a form while it is sent). */
export const setBusy = (root: Element, busy: boolean): void => {
  root.setAttribute("aria-busy", busy ? "true" : "false")
  for (const el of root.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(
    "button, input, select, textarea"
  )) {
    if (busy) {
      if (!el.disabled) el.dataset["busyDisabled"] = "1"
      el.disabled = true
    } else if (el.dataset["busyDisabled"] === "1") {
      delete el.dataset["busyDisabled"]
      el.disabled = false
    }
  }
}

let uid = 0
export const newId = (prefix: string): string => `${prefix}-${++uid}`

/** A labelled form field: the label's `for`, the hint's `aria-describedby`. */
export const field = (
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string
): HTMLElement => {
  if (control.id === "") control.id = newId("f")
  const hintEl = hint === undefined ? null : h("small", { id: `${control.id}-hint`, class: "hint" }, hint)
  if (hintEl !== null) control.setAttribute("aria-describedby", hintEl.id)
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl)
}
