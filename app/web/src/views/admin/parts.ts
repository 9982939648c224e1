// Small pieces every back-office page shares: its title, tables that scroll sideways on a narrow screen, "nothing".
import { h } from "../../dom.ts"
import { t } from "../../i18n.ts"
import { adminText } from "./texts.ts"

export const setAdminTitle = (title: string): void => {
  document.title = `${title} · ${adminText("admin.nav.title")} · ${t("app.name")}`
}

export const none = (): string => adminText("admin.common.none")

/** A table with its column headings; each row's cells carry `data-label` for the narrow-screen layout. */
export const table = (headings: ReadonlyArray<string>, rows: ReadonlyArray<HTMLElement>, testid: string): HTMLElement =>
  h("div", { class: "table-scroll" },
    h("table", { class: "table", "data-testid": testid },
      h("thead", {}, h("tr", {}, headings.map((text) => h("th", { scope: "col" }, text)))),
      h("tbody", {}, rows)))

/** A cell with its column's name for the narrow-screen layout. */
export const cell = (label: string, ...content: Array<Node | string | null>): HTMLElement => h("td", { "data-label": label }, content)
