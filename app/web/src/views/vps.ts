// A VPS: state and address, power (start; shut down, the graceful default, offering to force it when the guest does
// not stop in time; power-off and hard reset, each confirmed first), root password reset, snapshots, and the serial
// console in xterm.js through our WebSocket relay (binary frames = terminal bytes; a text frame resizes).
import { api, ApiError, type Snapshot, type Vps } from "../api.ts"
import { announce, setTitle, type View } from "../app.ts"
import { field, h } from "../dom.ts"
import { formatDate, formatDateTime, t } from "../i18n.ts"
import { createTerminal, type PanelTerminal, wsUrl } from "../terminal.ts"
import { confirmDialog, errorBox, loading, run, section, stateBadge } from "../ui.ts"
import { passwordBox } from "./order.ts"
import { contractSection } from "./contract.ts"

const base = (id: string) => `/api/vps/${encodeURIComponent(id)}`

/** The guest's time to stop cleanly (the API's default, Proxmox's own). */
const SHUTDOWN_SECONDS = 60

export const vpsView: View = async ({ root, params, alive, user }) => {
  const id = params["id"] ?? ""
  const body = h("div", { class: "stack" }, loading())
  root.append(body)
  let vps: Vps
  try {
    vps = (await api.get<{ vps: Vps }>(base(id))).vps
  } catch (error) {
    if (!alive()) return
    const errors = errorBox("vps-error")
    errors.show(error)
    setTitle("err.VPS_NOT_FOUND")
    body.replaceChildren(h("h1", {}, t("dash.vps")), errors.el)
    return
  }
  if (!alive()) return
  setTitle("vps.title", { name: vps.hostname })
  const cleanups: Array<() => void> = []

  const stateEl = h("span", { "data-testid": "vps-state" })
  const notice = h("div", { class: "warning-box", role: "status", "data-testid": "vps-suspended", hidden: true }, t("common.suspendedNotice"))
  const powerErrors = errorBox("vps-power-error")
  const actionButtons: Array<HTMLButtonElement> = []
  const button = (label: string, testid: string, className = "") => {
    const b = h("button", { type: "button", class: className, "data-testid": testid }, label)
    actionButtons.push(b)
    return b
  }
  const start = button(t("vps.start"), "vps-start")
  const shutdown = button(t("vps.shutdown"), "vps-shutdown", "primary")
  const stop = button(t("vps.stop"), "vps-stop", "danger-outline")
  const reset = button(t("vps.reset"), "vps-reset", "danger-outline")
  const resetPassword = button(t("vps.resetPassword"), "vps-reset-password")
  const passwordSlot = h("div", { "data-testid": "vps-password-slot" })
  const power = h("div", { class: "row wrap", role: "group", "aria-label": t("vps.power") }, start, shutdown, stop, reset, resetPassword)

  const update = (next: Vps) => {
    vps = next
    stateEl.replaceChildren(stateBadge(vps.status))
    stateEl.dataset["state"] = vps.status
    const suspended = vps.status === "suspended" || vps.status === "destroyed"
    notice.hidden = !suspended
    for (const b of actionButtons) b.disabled = suspended
    start.disabled = suspended || vps.status === "running"
    shutdown.disabled = suspended || vps.status !== "running"
    stop.disabled = suspended || vps.status !== "running"
    reset.disabled = suspended || vps.status !== "running"
    consoleConnect.disabled = suspended || vps.status !== "running" || socket !== undefined
  }

  const powerAction = (action: "start" | "stop" | "reset") =>
    run(power, async () => {
      const { vps: next } = await api.post<{ vps: Vps }>(`${base(id)}/${action}`)
      update(next)
      if (action === "stop") disconnect()
    }, { errors: powerErrors, success: t("common.done") }).then(() => update(vps))
  /** Power-off and hard reset lose what the guest has not saved: asked first, never on one click. */
  const confirmedAction = async (action: "stop" | "reset", question: string) => {
    if (!(await confirmDialog(question, { danger: true, confirmLabel: t(action === "stop" ? "vps.stop" : "vps.reset") }))) return
    await powerAction(action)
  }
  start.addEventListener("click", () => void powerAction("start"))
  stop.addEventListener("click", () => void confirmedAction("stop", t("vps.confirmStop", { name: vps.hostname })))
  reset.addEventListener("click", () => void confirmedAction("reset", t("vps.confirmReset", { name: vps.hostname })))
  shutdown.addEventListener("click", () => {
    void (async () => {
      let timedOut = false
      announce(t("vps.shuttingDown", { seconds: SHUTDOWN_SECONDS }))
      const ok = await run(power, async () => {
        try {
          const { vps: next } = await api.post<{ vps: Vps }>(`${base(id)}/shutdown`, { timeoutSeconds: SHUTDOWN_SECONDS })
          update(next)
          disconnect()
        } catch (error) {
          if (!(error instanceof ApiError && error.code === "SHUTDOWN_TIMED_OUT")) throw error
          timedOut = true
        }
      }, { errors: powerErrors })
      update(vps)
      // The guest ignored the request: it still runs; forcing it off is the owner's call.
      if (timedOut) await confirmedAction("stop", t("vps.shutdownTimedOut", { name: vps.hostname, seconds: SHUTDOWN_SECONDS }))
      else if (ok) announce(t("common.done"))
    })()
  })
  resetPassword.addEventListener("click", () => {
    void (async () => {
      if (!(await confirmDialog(t("vps.confirmResetPassword")))) return
      await run(power, async () => {
        const result = await api.post<{ rootPassword: string; appliesAtNextBoot: boolean }>(`${base(id)}/reset-password`)
        passwordSlot.replaceChildren(passwordBox(result.rootPassword),
          result.appliesAtNextBoot ? h("p", { class: "muted" }, t("vps.appliesAtNextBoot")) : "")
      }, { errors: powerErrors })
      update(vps)
    })()
  })

  // --- Snapshots ---
  const snapList = h("div", { "data-testid": "snapshot-list" })
  const snapErrors = errorBox("snapshot-error")
  const snapName = h("input", { type: "text", name: "name", required: true, maxlength: 40, pattern: "[A-Za-z][A-Za-z0-9_\\-]*", "data-testid": "snapshot-name" })
  const snapDescription = h("input", { type: "text", name: "description", maxlength: 500, "data-testid": "snapshot-description" })
  const snapCreate = button(t("vps.createSnapshot"), "snapshot-create", "primary")
  snapCreate.type = "submit"
  const snapForm = h("form", { class: "inline-form", "data-testid": "snapshot-form" },
    field(t("vps.snapshotName"), snapName, t("vps.snapshotNameHint")), field(t("vps.snapshotDescription"), snapDescription), snapCreate)
  const drawSnapshots = (snapshots: ReadonlyArray<Snapshot>) => {
    snapList.replaceChildren(snapshots.length === 0
      ? h("p", { class: "muted" }, t("vps.noSnapshots"))
      : h("table", { class: "table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("common.name")), h("th", { scope: "col" }, t("vps.snapshotDescription")),
          h("th", { scope: "col" }, t("common.created")), h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("common.actions"))))),
        h("tbody", {}, snapshots.map((s) => {
          const del = button(t("common.delete"), `snapshot-delete-${s.name}`, "danger-outline")
          del.setAttribute("aria-label", `${t("common.delete")} ${s.name}`)
          del.disabled = notice.hidden === false
          const row = h("tr", { "data-testid": `snapshot-${s.name}` },
            h("td", { "data-label": t("common.name") }, s.name), h("td", { "data-label": t("vps.snapshotDescription") }, s.description),
            h("td", { "data-label": t("common.created") }, s.createdAt === undefined ? "" : formatDateTime(s.createdAt)), h("td", { class: "actions" }, del))
          del.addEventListener("click", () => {
            void (async () => {
              if (!(await confirmDialog(t("common.confirmDelete", { name: s.name }), { danger: true, confirmLabel: t("common.delete") }))) return
              await run(row, async () => {
                await api.del(`${base(id)}/snapshots/${encodeURIComponent(s.name)}`)
                await loadSnapshots()
              }, { errors: snapErrors, success: t("common.done") })
            })()
          })
          return row
        }))))
  }
  const loadSnapshots = async () => {
    try {
      const { snapshots } = await api.get<{ snapshots: ReadonlyArray<Snapshot> }>(`${base(id)}/snapshots`)
      if (alive()) drawSnapshots(snapshots)
    } catch (error) {
      if (alive()) snapErrors.show(error)
    }
  }
  snapForm.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(snapForm, async () => {
      const description = snapDescription.value.trim()
      const { snapshots } = await api.post<{ snapshots: ReadonlyArray<Snapshot> }>(`${base(id)}/snapshots`, {
        name: snapName.value.trim(),
        ...(description === "" ? {} : { description })
      })
      snapName.value = ""
      snapDescription.value = ""
      drawSnapshots(snapshots)
    }, { errors: snapErrors, success: t("common.done") }).then(() => update(vps))
  })

  // --- Serial console ---
  const termBox = h("div", { class: "terminal", "data-testid": "vps-terminal" })
  const consoleState = h("p", { class: "muted", role: "status", "data-testid": "vps-console-state" }, t("vps.consoleHint"))
  const consoleConnect = h("button", { type: "button", class: "primary", "data-testid": "vps-console-connect" }, t("vps.consoleConnect"))
  const consoleDisconnect = h("button", { type: "button", "data-testid": "vps-console-disconnect", disabled: true }, t("vps.consoleDisconnect"))
  let terminal: PanelTerminal | undefined
  let socket: WebSocket | undefined
  const encoder = new TextEncoder()

  const disconnect = () => {
    socket?.close(1000)
    socket = undefined
    consoleDisconnect.disabled = true
    update(vps)
  }
  const connect = () => {
    terminal ??= createTerminal(termBox, {
      label: t("console.label"),
      onResize: (cols, rows) => {
        if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", cols, rows }))
      }
    })
    const term = terminal
    consoleState.textContent = t("console.connecting")
    const ws = new WebSocket(wsUrl(`${base(id)}/console`))
    ws.binaryType = "arraybuffer"
    socket = ws
    consoleConnect.disabled = true
    consoleDisconnect.disabled = false
    ws.addEventListener("open", () => {
      consoleState.textContent = `${t("console.connected")} ${t("vps.consoleHint")}`
      termBox.dataset["connected"] = "true"
      const { cols, rows } = term.fit()
      ws.send(JSON.stringify({ type: "resize", cols, rows }))
      term.term.focus()
    })
    ws.addEventListener("message", (event) => {
      if (event.data instanceof ArrayBuffer) term.term.write(new Uint8Array(event.data))
      else if (typeof event.data === "string") term.term.write(event.data)
    })
    ws.addEventListener("close", (event) => {
      termBox.dataset["connected"] = "false"
      if (socket === ws) socket = undefined
      consoleState.textContent = event.code === 1000 || event.code === 1005
        ? t("console.closed")
        : event.code === 1001 ? t("console.goingAway") : event.code === 4429 ? t("console.tooFast") : t("console.error")
      consoleDisconnect.disabled = true
      update(vps)
    })
  }
  if (!cleanups.length) {
    cleanups.push(() => {
      socket?.close(1000)
      terminal?.dispose()
    })
  }
  const onData = () => {
    // Typing goes to the VPS as binary frames (text frames are kept for control messages).
    terminal?.term.onData((data) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(encoder.encode(data))
    })
  }
  consoleConnect.addEventListener("click", () => {
    const first = terminal === undefined
    connect()
    if (first) onData()
  })
  consoleDisconnect.addEventListener("click", disconnect)

  body.replaceChildren(
    h("div", { class: "page-head" }, h("h1", {}, t("vps.title", { name: vps.hostname }))),
    notice,
    section(t("common.state"), "vps-summary",
      h("dl", { class: "facts" },
        h("dt", {}, t("common.state")), h("dd", {}, stateEl),
        h("dt", {}, t("common.address")), h("dd", { "data-testid": "vps-address" }, vps.address),
        h("dt", {}, t("vps.template")), h("dd", {}, vps.templateId),
        vps.graceUntil === undefined ? null : h("dt", {}, t("vps.graceUntil", { date: formatDate(vps.graceUntil) }))),
      power, powerErrors.el, passwordSlot),
    section(t("vps.console"), "vps-console",
      h("div", { class: "row wrap" }, consoleConnect, consoleDisconnect), consoleState, termBox),
    section(t("vps.snapshots"), "vps-snapshots", snapList, snapErrors.el, snapForm),
    (await contractSection(vps.subscriptionId, vps.hostname, user)) ?? ""
  )
  update(vps)
  await loadSnapshots()
  update(vps)
  // Open the console straight away when the VPS runs: that is what people come here for.
  if (vps.status === "running" && alive()) consoleConnect.click()
  return () => {
    for (const c of cleanups) c()
  }
}
