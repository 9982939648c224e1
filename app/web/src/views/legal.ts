// The legal pages (/legal/notice, /legal/terms, /legal/privacy) from GET /api/legal/:page in the panel's language,
// drawn from the parsed text with DOM nodes only (legalText.ts), with the consumer mediator and, on the privacy page,
// the cookies the platform sets; and the footer that links them from every page.
import { ApiError, api, errorText } from "../api.ts"
import { setTitle, type View } from "../app.ts"
import { h } from "../dom.ts"
import { formatDate, type Key, language, t } from "../i18n.ts"
import { type Block, type Inline, isSafeHref, parseLegalText } from "../legalText.ts"
import { loading } from "../ui.ts"

export const LEGAL_LINKS: ReadonlyArray<readonly [page: "notice" | "terms" | "privacy", key: Key]> = [
  ["notice", "legal.notice"],
  ["terms", "legal.terms"],
  ["privacy", "legal.privacy"]
]

interface LegalPage {
  readonly title: string
  readonly body: string
  readonly updatedAt: string | null
  readonly placeholder: boolean
  readonly mediator: { readonly name: string; readonly url: string }
  readonly cookies: ReadonlyArray<{ readonly name: string; readonly setBy: "platform" | "stripe"; readonly purpose: string; readonly lifetime: string }>
}

const inline = (part: Inline): Node =>
  part.kind === "text"
    ? document.createTextNode(part.text)
    : part.kind === "strong"
    ? h("strong", {}, part.text)
    : h("a", { href: part.href, ...(part.href.startsWith("/") ? {} : { rel: "noopener noreferrer", "data-external": "" }) }, part.text)

const block = (b: Block): HTMLElement => {
  switch (b.kind) {
    case "heading":
      return h(b.level === 1 ? "h2" : b.level === 2 ? "h3" : "h4", {}, b.inlines.map(inline))
    case "paragraph":
      return h("p", {}, b.inlines.map(inline))
    case "list":
      return h("ul", {}, b.items.map((item) => h("li", {}, item.map(inline))))
  }
}

const cookieTable = (cookies: LegalPage["cookies"]): HTMLElement =>
  h("section", { "data-testid": "legal-cookies" },
    h("h2", {}, t("legal.cookies")),
    h("p", {}, t("legal.cookiesIntro")),
    h("table", { class: "table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("legal.cookie.name")), h("th", { scope: "col" }, t("legal.cookie.setBy")),
        h("th", { scope: "col" }, t("legal.cookie.purpose")), h("th", { scope: "col" }, t("legal.cookie.lifetime")))),
      h("tbody", {}, cookies.map((c) =>
        h("tr", { "data-testid": "legal-cookie" }, h("td", {}, h("code", {}, c.name)),
          h("td", {}, t(c.setBy === "platform" ? "legal.cookie.platform" : "legal.cookie.stripe")), h("td", {}, c.purpose), h("td", {}, c.lifetime))))))

export const legalView: View = async ({ root, params, alive }) => {
  const page = params["page"] ?? ""
  const known = LEGAL_LINKS.find(([id]) => id === page)
  setTitle(known?.[1] ?? "notFound.title")
  root.append(loading())
  let answer: LegalPage
  try {
    answer = await api.get<LegalPage>(`/api/legal/${encodeURIComponent(page)}?lang=${language()}`, { anonymous: true })
  } catch (error) {
    if (!alive()) return
    const missing = error instanceof ApiError && error.status === 404
    root.replaceChildren(h("div", { class: "card", "data-testid": "legal-error" },
      h("h1", {}, t(missing ? "notFound.title" : "legal.notice")), h("p", {}, missing ? t("notFound.text") : errorText(error))))
    return
  }
  if (!alive()) return
  document.title = `${answer.title} · ${t("app.name")}`
  root.replaceChildren(h("article", { class: "card legal", "data-testid": `legal-${page}` },
    h("h1", {}, answer.title),
    answer.placeholder ? h("p", { class: "notice", "data-testid": "legal-placeholder" }, t("legal.placeholder")) : null,
    answer.updatedAt === null ? null : h("p", { class: "muted" }, t("legal.updated", { date: formatDate(answer.updatedAt) })),
    h("div", { "data-testid": "legal-body" }, parseLegalText(answer.body).map(block)),
    answer.cookies.length > 0 ? cookieTable(answer.cookies) : null,
    h("section", { "data-testid": "legal-mediator" },
      h("h2", {}, t("legal.mediator")),
      h("p", {}, t("legal.mediatorText"), " ", h("strong", {}, answer.mediator.name), " — ",
        isSafeHref(answer.mediator.url)
          ? h("a", { href: answer.mediator.url, rel: "noopener noreferrer", "data-external": "", "data-testid": "legal-mediator-link" }, answer.mediator.url)
          : answer.mediator.url))))
}

/** The footer of every page: the three legal pages. */
export const legalFooter = (): HTMLElement =>
  h("footer", { class: "footer", "data-testid": "footer" },
    h("nav", { "aria-label": t("legal.footer") },
      h("ul", {}, LEGAL_LINKS.map(([page, key]) =>
        h("li", {}, h("a", { href: `/legal/${page}`, "data-testid": `footer-legal-${page}` }, t(key)))))))
