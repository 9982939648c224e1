// Backups over our relay: list, create, download, lock/unlock, restore, delete. While one is being made the
// list refreshes itself until it completes.
import { api, type Backup, type ListOf } from "../api.ts"
import { disableControls, h } from "../dom.ts"
import { formatBytes, formatDateTime, t } from "../i18n.ts"
import { confirmDialog, errorBox, run, stateBadge } from "../ui.ts"
import { followDownload } from "./gameFiles.ts"

export const backupManager = (identifier: string, alive: () => boolean): { readonly el: HTMLElement; load(): Promise<void>; disable(): void; dispose(): void } => {
  const base = `/api/client/servers/${encodeURIComponent(identifier)}/backups`
  const errors = errorBox("backups-error")
  const listEl = h("div", { "data-testid": "backups-list" })
  const name = h("input", { type: "text", id: "backup-name", maxlength: 191, "data-testid": "backup-name" })
  const create = h("button", { type: "submit", class: "primary", "data-testid": "backup-create" }, t("backups.create"))
  const form = h("form", { class: "inline-form", "data-testid": "backup-form" },
    h("div", { class: "field" }, h("label", { for: "backup-name" }, t("backups.name")), name), create)
  const el = h("div", { class: "stack" }, listEl, errors.el, form)
  let timer: number | undefined
  let disabled = false

  const load = async (): Promise<void> => {
    window.clearTimeout(timer)
    try {
      const list = await api.get<ListOf<Backup>>(base)
      if (!alive()) return
      errors.clear()
      const backups = list.data.map((d) => d.attributes)
      draw(backups)
      if (backups.some((b) => b.completed_at === null)) timer = window.setTimeout(() => void load(), 1500)
    } catch (error) {
      if (alive()) errors.show(error)
    }
  }

  const draw = (backups: ReadonlyArray<Backup>) => {
    if (backups.length === 0) {
      listEl.replaceChildren(h("p", { class: "muted" }, t("backups.empty")))
      return
    }
    listEl.replaceChildren(h("table", { class: "table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("common.name")), h("th", { scope: "col" }, t("common.state")),
        h("th", { scope: "col" }, t("backups.size")), h("th", { scope: "col" }, t("common.created")),
        h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("common.actions"))))),
      h("tbody", {}, backups.map((b) => {
        const pending = b.completed_at === null
        const state = pending ? "pending" : b.is_successful ? "completed" : "failed"
        const row = h("tr", { "data-testid": `backup-${b.uuid}`, "data-backup-name": b.name, "data-state": state, "data-locked": String(b.is_locked) })
        const action = (label: string, testid: string, onClick: () => void, options: { className?: string; off?: boolean } = {}) => {
          const button = h("button", { type: "button", class: options.className ?? "", "data-testid": testid, "aria-label": `${label} ${b.name}`,
            disabled: disabled || pending || options.off === true }, label)
          button.addEventListener("click", onClick)
          return button
        }
        row.append(
          h("td", { "data-label": t("common.name") }, b.name, " ", b.is_locked ? h("span", { class: "badge", "data-testid": "backup-locked" }, t("backups.locked")) : null),
          h("td", { "data-label": t("common.state") }, pending ? h("span", { class: "badge badge-pending" }, t("backups.creating")) : stateBadge(state)),
          h("td", { "data-label": t("backups.size") }, pending ? "" : formatBytes(b.bytes)),
          h("td", { "data-label": t("common.created") }, formatDateTime(b.created_at)),
          h("td", { class: "actions" },
            action(t("backups.download"), "backup-download", () => {
              void run(row, async () => {
                const signed = await api.get<{ attributes: { url: string } }>(`${base}/${b.uuid}/download`)
                followDownload(signed.attributes.url)
              }, { errors })
            }, { off: !b.is_successful }),
            action(b.is_locked ? t("backups.unlock") : t("backups.lock"), "backup-lock", () => {
              void run(row, async () => {
                await api.post(`${base}/${b.uuid}/lock`)
                await load()
              }, { errors, success: t("common.done") })
            }),
            action(t("backups.restore"), "backup-restore", () => {
              void (async () => {
                const truncate = h("input", { type: "checkbox", id: "backup-truncate", "data-testid": "backup-truncate" })
                const extra = h("div", { class: "check" }, truncate, h("label", { for: "backup-truncate" }, t("backups.truncate")))
                if (!(await confirmDialog(t("backups.confirmRestore", { name: b.name }), { extra, confirmLabel: t("backups.restore") }))) return
                await run(row, async () => {
                  await api.post(`${base}/${b.uuid}/restore`, { truncate: truncate.checked })
                }, { errors, success: t("backups.restoring") })
              })()
            }, { off: !b.is_successful }),
            action(t("common.delete"), "backup-delete", () => {
              void (async () => {
                if (!(await confirmDialog(t("common.confirmDelete", { name: b.name }), { danger: true, confirmLabel: t("common.delete") }))) return
                await run(row, async () => {
                  await api.del(`${base}/${b.uuid}`)
                  await load()
                }, { errors, success: t("common.done") })
              })()
            }, { className: "danger-outline", off: b.is_locked })))
        return row
      }))))
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(form, async () => {
      const value = name.value.trim()
      await api.post(base, value === "" ? {} : { name: value })
      name.value = ""
      await load()
    }, { errors })
  })

  return {
    el,
    load,
    disable() {
      disabled = true
      disableControls(el)
    },
    dispose() {
      window.clearTimeout(timer)
    }
  }
}
