// The legal pages (reference/billing-fr.md §4): mentions légales, terms of sale, privacy and cookies policy, from
// the operator's texts (LEGAL_DIR; placeholders in sandbox mode), with the consumer mediator. Public and cacheable:
// GET /api/legal/:page?lang=fr|en → { page, language, title, body, updatedAt, placeholder, mediator, cookies }.
// `body` is the text as written (a small Markdown subset the panel renders with DOM nodes, never as HTML).
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "./Api.ts"
import { COOKIE_POLICY } from "./cookies.ts"
import { errorResponse } from "./errorMapping.ts"

export const LEGAL_PAGES = ["notice", "terms", "privacy"] as const
export type LegalPageId = (typeof LEGAL_PAGES)[number]
export const LEGAL_LANGUAGES = ["fr", "en"] as const
export type LegalLanguage = (typeof LEGAL_LANGUAGES)[number]

export interface LegalText {
  readonly title: string
  readonly body: string
  /** The file's last modification (YYYY-MM-DD); null for a sandbox placeholder. */
  readonly updatedAt: string | null
}

export interface LegalTexts {
  readonly pages: { readonly [P in LegalPageId]: { readonly [L in LegalLanguage]: LegalText } }
  /** Sandbox mode without LEGAL_DIR: the texts are placeholders, and say so. */
  readonly placeholder: boolean
  readonly mediator: { readonly name: string; readonly url: string }
}

/** Five minutes: an operator's edit shows within that after a restart, and every page view is not a request. */
export const LEGAL_CACHE_CONTROL = "public, max-age=300"

const isPage = (text: string): text is LegalPageId => (LEGAL_PAGES as ReadonlyArray<string>).includes(text)
const isLanguage = (text: string): text is LegalLanguage => (LEGAL_LANGUAGES as ReadonlyArray<string>).includes(text)

/** The page's answer: the privacy page also lists the cookies (adapters/http/cookies.ts), in its language. */
export const legalAnswer = (texts: LegalTexts, page: LegalPageId, language: LegalLanguage) => ({
  page,
  language,
  ...texts.pages[page][language],
  placeholder: texts.placeholder,
  mediator: texts.mediator,
  cookies: page === "privacy"
    ? COOKIE_POLICY.map((c) => ({ name: c.name, setBy: c.setBy, purpose: c.purpose[language], lifetime: c.lifetime[language] }))
    : []
})

/** GET /api/legal/:page (LegalApi.ts), answered as is: its own error codes and its cache header. */
export const LegalHandlers = (texts: LegalTexts) =>
  HttpApiBuilder.group(Api, "legal", (handlers) =>
    handlers.handleRaw("page", ({ params, query }) =>
      Effect.sync(() => {
        const page = params.page
        if (!isPage(page)) {
          // The same answer for any other page (the request's text is not echoed back).
          return errorResponse(404, "LEGAL_PAGE_NOT_FOUND", `No such legal page: the pages are ${LEGAL_PAGES.join(", ")}.`)
        }
        const lang = query.lang ?? "fr"
        if (!isLanguage(lang)) return errorResponse(400, "INVALID_LANGUAGE", "lang must be fr or en.")
        return HttpServerResponse.jsonUnsafe(legalAnswer(texts, page, lang), { headers: { "cache-control": LEGAL_CACHE_CONTROL } })
      })))
