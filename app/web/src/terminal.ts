// An xterm.js terminal that fills its container (fit addon), follows the panel's theme and reports its size.
import { FitAddon } from "@xterm/addon-fit"
import { Terminal } from "@xterm/xterm"
import { effectiveTheme } from "./prefs.ts"

const themes = {
  dark: { background: "#111418", foreground: "#e6e6e6", cursor: "#e6e6e6", selectionBackground: "#3a4a5e" },
  light: { background: "#fbfbfc", foreground: "#1d232a", cursor: "#1d232a", selectionBackground: "#b9d3f0" }
}

export interface PanelTerminal {
  readonly term: Terminal
  /** Refits to the container; returns the new size. */
  fit(): { cols: number; rows: number }
  dispose(): void
}

export const createTerminal = (
  container: HTMLElement,
  options: { readonly label: string; readonly readOnly?: boolean; readonly onResize?: (cols: number, rows: number) => void }
): PanelTerminal => {
  const term = new Terminal({
    convertEol: false,
    cursorBlink: !options.readOnly,
    disableStdin: options.readOnly ?? false,
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace",
    fontSize: 14,
    scrollback: 5000,
    screenReaderMode: false,
    theme: themes[effectiveTheme()]
  })
  const fitAddon = new FitAddon()
  term.loadAddon(fitAddon)
  term.open(container)
  term.textarea?.setAttribute("aria-label", options.label)
  const fit = () => {
    try {
      fitAddon.fit()
    } catch {
      // Not laid out yet (hidden tab): the next resize fits it.
    }
    return { cols: term.cols, rows: term.rows }
  }
  const sub = options.onResize === undefined ? undefined : term.onResize(({ cols, rows }) => options.onResize?.(cols, rows))
  let pending: number | undefined
  const onWindowResize = () => {
    window.clearTimeout(pending)
    pending = window.setTimeout(fit, 100)
  }
  window.addEventListener("resize", onWindowResize)
  const observer = typeof ResizeObserver === "undefined" ? undefined : new ResizeObserver(onWindowResize)
  observer?.observe(container)
  const themeObserver = new MutationObserver(() => {
    term.options.theme = themes[effectiveTheme()]
  })
  themeObserver.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] })
  fit()
  return {
    term,
    fit,
    dispose() {
      window.removeEventListener("resize", onWindowResize)
      window.clearTimeout(pending)
      observer?.disconnect()
      themeObserver.disconnect()
      sub?.dispose()
      term.dispose()
    }
  }
}

/** The WebSocket URL of a path on this origin (ws: for http:, wss: for https:). */
export const wsUrl = (path: string): string => {
  const url = new URL(path, location.href)
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
  return url.href
}
