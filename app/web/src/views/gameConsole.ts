// The game console: our token from GET /api/client/servers/:id/websocket, then our WebSocket speaking the Wings
// event protocol (auth, console output, status, stats, token expiring → a fresh token on the same socket).
import { api, errorText } from "../api.ts"
import { h } from "../dom.ts"
import { formatBytes, formatDecimal, hasKey, t } from "../i18n.ts"
import { createTerminal, type PanelTerminal } from "../terminal.ts"

interface Frame {
  readonly event: string
  readonly args?: ReadonlyArray<string>
}

export interface GameConsole {
  readonly el: HTMLElement
  connect(): void
  dispose(): void
}

export const gameConsole = (identifier: string, options: { readonly onSuspended: () => void }): GameConsole => {
  const tokenPath = `/api/client/servers/${encodeURIComponent(identifier)}/websocket`
  const termBox = h("div", { class: "terminal", "data-testid": "game-terminal" })
  const serverState = h("span", { "data-testid": "game-power-state", "data-state": "unknown" }, "")
  const stats = h("span", { class: "muted", "data-testid": "game-stats" })
  const consoleState = h("p", { class: "muted", role: "status", "data-testid": "game-console-state" }, "")
  const command = h("input", { type: "text", id: "game-command", autocomplete: "off", spellcheck: "false", maxlength: 4096, "data-testid": "game-command" })
  const send = h("button", { type: "submit", class: "primary", "data-testid": "game-command-send" }, t("game.send"))
  const reconnect = h("button", { type: "button", "data-testid": "game-console-reconnect", hidden: true }, t("game.reconnect"))
  const form = h("form", { class: "command-line", "data-testid": "game-command-form" },
    h("label", { for: "game-command", class: "sr-only" }, t("game.command")),
    h("span", { "aria-hidden": "true", class: "prompt" }, ">"), command, send)
  const el = h("div", { class: "stack" },
    h("div", { class: "row wrap" }, serverState, stats),
    termBox, form, h("div", { class: "row wrap" }, consoleState, reconnect))

  let terminal: PanelTerminal | undefined
  let socket: WebSocket | undefined
  let disposed = false
  const history: Array<string> = []
  let historyAt = 0

  const setServerState = (state: string) => {
    serverState.dataset["state"] = state
    const key = `state.${state}`
    serverState.textContent = t("game.serverState", { state: hasKey(key) ? t(key) : state })
  }

  const token = async (): Promise<{ token: string; socket: string }> =>
    (await api.get<{ data: { token: string; socket: string } }>(tokenPath)).data

  const sendFrame = (frame: Frame) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame))
  }

  const reauthenticate = async () => {
    try {
      const fresh = await token()
      sendFrame({ event: "auth", args: [fresh.token] })
    } catch (error) {
      consoleState.textContent = errorText(error)
    }
  }

  const onFrame = (frame: Frame, term: PanelTerminal) => {
    const args = frame.args ?? []
    switch (frame.event) {
      case "auth success":
        consoleState.textContent = t("console.connected")
        termBox.dataset["connected"] = "true"
        sendFrame({ event: "send logs" })
        sendFrame({ event: "send stats" })
        return
      case "console output":
        for (const line of args) term.term.write(`${line.replace(/\r?\n/g, "\r\n")}\r\n`)
        return
      case "status":
        setServerState(args[0] ?? "offline")
        return
      case "stats": {
        try {
          const s = JSON.parse(args[0] ?? "{}") as { cpu_absolute?: number; memory_bytes?: number; state?: string }
          if (typeof s.state === "string") setServerState(s.state)
          stats.textContent = t("game.stats", {
            cpu: formatDecimal(s.cpu_absolute ?? 0, 1),
            memory: formatBytes(s.memory_bytes ?? 0)
          })
        } catch {
          // A malformed stats frame changes nothing.
        }
        return
      }
      case "token expiring":
      case "token expired":
        void reauthenticate()
        return
      case "jwt error":
        consoleState.textContent = t("game.jwtError")
        return
      case "daemon error":
        term.term.write(`\x1b[31m${args[0] ?? ""}\x1b[0m\r\n`)
        return
      default:
        return
    }
  }

  const connect = () => {
    if (disposed) return
    socket?.close(1000)
    terminal ??= createTerminal(termBox, { label: t("console.label"), readOnly: true })
    const term = terminal
    reconnect.hidden = true
    consoleState.textContent = t("console.connecting")
    void (async () => {
      let grant: { token: string; socket: string }
      try {
        grant = await token()
      } catch (error) {
        consoleState.textContent = errorText(error)
        reconnect.hidden = false
        return
      }
      if (disposed) return
      const ws = new WebSocket(grant.socket)
      socket = ws
      ws.addEventListener("open", () => ws.send(JSON.stringify({ event: "auth", args: [grant.token] })))
      ws.addEventListener("message", (event) => {
        if (typeof event.data !== "string") return
        try {
          onFrame(JSON.parse(event.data) as Frame, term)
        } catch {
          // Not a frame of the protocol.
        }
      })
      ws.addEventListener("close", (event) => {
        if (socket !== ws) return
        socket = undefined
        termBox.dataset["connected"] = "false"
        if (disposed) return
        if (event.code === 4409) {
          consoleState.textContent = t("console.suspended")
          options.onSuspended()
          return
        }
        consoleState.textContent = event.code === 1000 ? t("console.closed") : t("console.error")
        reconnect.hidden = false
      })
    })()
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const line = command.value
    if (line.trim() === "" || socket?.readyState !== WebSocket.OPEN) return
    sendFrame({ event: "send command", args: [line] })
    history.push(line)
    historyAt = history.length
    command.value = ""
  })
  // Up and down walk through the commands sent, as in a shell.
  command.addEventListener("keydown", (event) => {
    if (event.key === "ArrowUp" && historyAt > 0) {
      historyAt -= 1
      command.value = history[historyAt] ?? ""
      event.preventDefault()
    } else if (event.key === "ArrowDown" && historyAt < history.length) {
      historyAt += 1
      command.value = history[historyAt] ?? ""
      event.preventDefault()
    }
  })
  reconnect.addEventListener("click", connect)

  return {
    el,
    connect,
    dispose() {
      disposed = true
      socket?.close(1000)
      terminal?.dispose()
    }
  }
}

/** Disables the command line (a suspended server). */
export const disableConsole = (consoleEl: HTMLElement): void => {
  for (const el of consoleEl.querySelectorAll<HTMLInputElement | HTMLButtonElement>("input, button")) el.disabled = true
}
