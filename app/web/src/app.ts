// The application shell: the signed-in user, the router (History API, so e-mailed links such as
// /reset-password?token=… open the right page), the header and the live region that announces results.
import { api, type User } from "./api.ts"
import { clear, h } from "./dom.ts"
import { type Key, t } from "./i18n.ts"

export type Cleanup = () => void

export interface ViewContext {
  readonly root: HTMLElement
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  readonly user: User | null
  /** Whether this view is still the one on screen (async work checks it before touching the page). */
  readonly alive: () => boolean
}

export type View = (ctx: ViewContext) => void | Cleanup | Promise<void | Cleanup>

export interface Route {
  readonly pattern: RegExp
  readonly keys: ReadonlyArray<string>
  readonly view: View
  /** "user": signed-in only; "guest": signed-out only; "any". */
  readonly access: "user" | "guest" | "any"
}

export const route = (path: string, view: View, access: Route["access"]): Route => {
  const keys: Array<string> = []
  const pattern = new RegExp(
    "^" + path.replace(/:(\w+)/g, (_, key: string) => {
      keys.push(key)
      return "([^/]+)"
    }) + "/?$"
  )
  return { pattern, keys, view, access }
}

interface State {
  user: User | null
  routes: ReadonlyArray<Route>
  notFound: View
  cleanup: Cleanup | undefined
  generation: number
  onUserChange: (user: User | null) => void
  redrawHeader: () => void
}

const state: State = {
  user: null,
  routes: [],
  notFound: () => undefined,
  cleanup: undefined,
  generation: 0,
  onUserChange: () => undefined,
  redrawHeader: () => undefined
}

export const currentUser = (): User | null => state.user

export const setUser = (user: User | null): void => {
  state.user = user
  state.onUserChange(user)
}

/** Re-reads the session (GET /api/auth/me); null when signed out. */
export const loadUser = async (): Promise<User | null> => {
  try {
    const { user } = await api.get<{ user: User }>("/api/auth/me", { anonymous: true })
    return user
  } catch {
    return null
  }
}

// --- Announcements (aria-live) ---

let liveRegion: HTMLElement | undefined
let alertRegion: HTMLElement | undefined
let statusTimer: number | undefined
let alertTimer: number | undefined

/** Polite status messages ("Saved.") for screen readers, also shown as a toast. */
export const announce = (message: string, kind: "status" | "error" = "status"): void => {
  const region = kind === "error" ? alertRegion : liveRegion
  if (region === undefined) return
  region.textContent = ""
  window.clearTimeout(kind === "error" ? alertTimer : statusTimer)
  // A fresh text node, so the same message twice is read twice; the toast goes away after a while.
  window.setTimeout(() => {
    region.textContent = message
  }, 30)
  const clearLater = window.setTimeout(() => {
    if (region.textContent === message) region.textContent = ""
  }, kind === "error" ? 12_000 : 6_000)
  if (kind === "error") alertTimer = clearLater
  else statusTimer = clearLater
}

export const setTitle = (key: Key, params?: Record<string, string | number>): void => {
  document.title = `${t(key, params)} · ${t("app.name")}`
}

// --- Router ---

export const navigate = (to: string, options: { replace?: boolean } = {}): void => {
  if (options.replace) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  void render()
}

let main: HTMLElement | undefined

export const render = async (): Promise<void> => {
  if (main === undefined) return
  state.cleanup?.()
  state.cleanup = undefined
  const generation = ++state.generation
  const url = new URL(location.href)
  let view = state.notFound
  let params: Record<string, string> = {}
  for (const r of state.routes) {
    const match = r.pattern.exec(url.pathname)
    if (match === null) continue
    if (r.access === "user" && state.user === null) {
      const next = url.pathname + url.search
      return navigate(`/login${next === "/" ? "" : `?next=${encodeURIComponent(next)}`}`, { replace: true })
    }
    if (r.access === "guest" && state.user !== null) return navigate("/", { replace: true })
    view = r.view
    params = Object.fromEntries(r.keys.map((key, i) => [key, decodeURIComponent(match[i + 1] ?? "")]))
    break
  }
  state.redrawHeader()
  const root = main
  clear(root)
  root.setAttribute("aria-busy", "true")
  const ctx: ViewContext = { root, params, query: url.searchParams, user: state.user, alive: () => state.generation === generation }
  try {
    const cleanup = await view(ctx)
    if (state.generation === generation) state.cleanup = cleanup ?? undefined
    else cleanup?.()
  } finally {
    if (state.generation === generation) root.setAttribute("aria-busy", "false")
  }
  if (state.generation === generation) {
    // The page changed: move focus to its heading, as a screen reader user expects after navigation.
    const heading = root.querySelector<HTMLElement>("h1")
    if (heading !== null) {
      heading.tabIndex = -1
      heading.focus({ preventScroll: false })
    }
  }
}

/** Same-origin links navigate inside the app (no page reload); downloads and new tabs are left alone. */
const interceptLinks = (event: MouseEvent) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.target as Element | null)?.closest?.("a")
  if (anchor === null || anchor === undefined || anchor.hasAttribute("download") || anchor.target !== "") return
  const url = new URL(anchor.href, location.href)
  if (url.origin !== location.origin || url.pathname.startsWith("/api/") || anchor.dataset["external"] !== undefined) return
  event.preventDefault()
  navigate(url.pathname + url.search)
}

export const link = (href: string, text: string, attrs: Record<string, string> = {}): HTMLAnchorElement =>
  h("a", { href, ...attrs }, text)

export interface StartOptions {
  readonly routes: ReadonlyArray<Route>
  readonly notFound: View
  readonly header: (user: User | null) => HTMLElement
  /** Drawn under every page, redrawn with the header (a language switch). */
  readonly footer: () => HTMLElement
  readonly user: User | null
  readonly onUserChange: (user: User | null) => void
}

export const start = (mount: HTMLElement, options: StartOptions): void => {
  state.routes = options.routes
  state.notFound = options.notFound
  state.user = options.user
  const headerSlot = h("div", { class: "header-slot" })
  const footerSlot = h("div", { class: "footer-slot" })
  const redraw = () => {
    headerSlot.replaceChildren(options.header(state.user))
    footerSlot.replaceChildren(options.footer())
  }
  state.redrawHeader = redraw
  state.onUserChange = (user) => {
    options.onUserChange(user)
    redraw()
  }
  main = h("main", { id: "main", class: "main", tabindex: "-1" })
  liveRegion = h("div", { class: "toast", role: "status", "aria-live": "polite", "data-testid": "status" })
  alertRegion = h("div", { class: "toast toast-error", role: "alert", "aria-live": "assertive", "data-testid": "alert" })
  mount.replaceChildren(
    h("a", { class: "skip-link", href: "#main", "data-external": "" }, t("app.skip")),
    headerSlot,
    main,
    footerSlot,
    h("div", { class: "toasts" }, liveRegion, alertRegion)
  )
  redraw()
  document.addEventListener("click", interceptLinks)
  window.addEventListener("popstate", () => void render())
  void render()
}

/** Redraws the header and the page (after a language or theme change). */
export const refresh = (): void => {
  void render()
}
