// Small pieces every back-office page shares: its title, tables that scroll sideways on a narrow screen, "nothing".
import { h } from "../../dom.ts"
import { t } from "../../i18n.ts"
import { run, section } from "../../ui.ts"
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

/**
 * A section holding a table read page by page (keyset, newest first): the first page's rows, then a "more" button
 * that reads the page after `next` and appends its rows, hidden once there is none.
 */
export const pagedSection = <Row>(options: {
  readonly title: string
  readonly testid: string
  readonly headings: ReadonlyArray<string>
  readonly empty: string
  readonly more: string
  readonly first: { readonly rows: ReadonlyArray<Row>; readonly next: string | undefined }
  readonly row: (row: Row) => HTMLElement
  /** The page after the cursor `next`. */
  readonly after: (next: string) => Promise<{ readonly rows: ReadonlyArray<Row>; readonly next: string | undefined }>
}): HTMLElement => {
  const body = h("tbody", {}, options.first.rows.map(options.row))
  const more = h("button", { type: "button", class: "secondary", hidden: options.first.next === undefined, "data-testid": `${options.testid}-more` },
    options.more)
  let next = options.first.next
  more.addEventListener("click", () => {
    void run(more, async () => {
      if (next === undefined) return
      const page = await options.after(next)
      body.append(...page.rows.map(options.row))
      next = page.next
      more.hidden = next === undefined
    })
  })
  return section(options.title, options.testid,
    options.first.rows.length === 0
      ? h("p", { class: "muted" }, options.empty)
      : h("div", { class: "table-scroll" }, h("table", { class: "table" },
        h("thead", {}, h("tr", {}, options.headings.map((text) => h("th", { scope: "col" }, text)))), body)),
    more)
}
