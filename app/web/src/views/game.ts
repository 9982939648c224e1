// A game server: state, address, power, the live console, the file manager and backups. A suspended server says
// so and every action is disabled (the API refuses them too).
import { api, type GameServer } from "../api.ts"
import { setTitle, type View } from "../app.ts"
import { h } from "../dom.ts"
import { formatDate, t } from "../i18n.ts"
import { confirmDialog, errorBox, loading, run, section, stateBadge } from "../ui.ts"
import { backupManager } from "./gameBackups.ts"
import { disableConsole, gameConsole } from "./gameConsole.ts"
import { fileManager } from "./gameFiles.ts"
import { contractSection } from "./contract.ts"

export const gameView: View = async ({ root, params, alive, user }) => {
  const id = params["id"] ?? ""
  const body = h("div", { class: "stack" }, loading())
  root.append(body)
  let server: GameServer
  try {
    server = (await api.get<{ gameServer: GameServer }>(`/api/game-servers/${encodeURIComponent(id)}`)).gameServer
  } catch (error) {
    if (!alive()) return
    const errors = errorBox("game-error")
    errors.show(error)
    setTitle("err.GAME_SERVER_NOT_FOUND")
    body.replaceChildren(h("h1", {}, t("dash.games")), errors.el)
    return
  }
  if (!alive()) return
  setTitle("game.title", { name: server.name })
  const usable = server.status === "active"
  const stateEl = h("span", { "data-testid": "game-state", "data-state": server.status }, stateBadge(server.status))
  const notice = h("div", { class: "warning-box", role: "status", "data-testid": "game-suspended", hidden: usable }, t("common.suspendedNotice"))
  const powerErrors = errorBox("game-power-error")
  const powerButtons = (["start", "stop", "restart", "kill"] as const).map((signal) => {
    const b = h("button", { type: "button", class: signal === "kill" ? "danger-outline" : "", "data-testid": `game-power-${signal}`, disabled: !usable }, t(`game.${signal}`))
    b.addEventListener("click", () => {
      void (async () => {
        if (signal === "kill" && !(await confirmDialog(t("game.confirmKill"), { danger: true, confirmLabel: t("game.kill") }))) return
        await run(power, async () => {
          await api.post(`/api/game-servers/${encodeURIComponent(id)}/power`, { signal })
        }, { errors: powerErrors, success: t("common.done") })
      })()
    })
    return b
  })
  const power = h("div", { class: "row wrap", role: "group", "aria-label": t("game.power") }, ...powerButtons)

  const files = fileManager(server.identifier)
  const backups = backupManager(server.identifier, alive)
  const suspend = () => {
    notice.hidden = false
    stateEl.replaceChildren(stateBadge("suspended"))
    stateEl.dataset["state"] = "suspended"
    for (const b of powerButtons) b.disabled = true
    disableConsole(consoleView.el)
    files.disable()
    backups.disable()
  }
  const consoleView = gameConsole(server.identifier, { onSuspended: suspend })

  body.replaceChildren(
    h("div", { class: "page-head" }, h("h1", {}, t("game.title", { name: server.name }))),
    notice,
    section(t("common.state"), "game-summary",
      h("dl", { class: "facts" },
        h("dt", {}, t("common.state")), h("dd", {}, stateEl),
        h("dt", {}, t("common.address")), h("dd", { "data-testid": "game-address" }, server.address),
        server.graceUntil === undefined ? null : h("dt", {}, t("vps.graceUntil", { date: formatDate(server.graceUntil) }))),
      power, powerErrors.el),
    section(t("game.console"), "game-console", consoleView.el),
    section(t("files.title"), "game-files", files.el),
    section(t("backups.title"), "game-backups", backups.el),
    (await contractSection(server.subscriptionId, server.name, user)) ?? ""
  )
  if (usable) {
    consoleView.connect()
    await Promise.all([files.load(), backups.load()])
  } else {
    suspend()
  }
  return () => {
    consoleView.dispose()
    backups.dispose()
  }
}
