// The legal pages' texts (LEGAL_DIR): mentions-legales, cgv and confidentialite, each as <name>.fr.md and
// <name>.en.md, read once at start. Required outside sandbox mode; sandbox mode without it serves placeholders that
// say they are placeholders. A file's first "# " line is the page's title; the rest its body.
import { Effect } from "effect"
import { readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import {
  LEGAL_LANGUAGES,
  LEGAL_PAGES,
  type LegalLanguage,
  type LegalPageId,
  type LegalText,
  type LegalTexts
} from "../adapters/http/LegalRoutes.ts"
import type { Seller } from "../domain/billing/invoicing/Seller.ts"
import { InvalidSetting } from "./InvalidSetting.ts"

/** The file name (without language and extension) of each page in LEGAL_DIR. */
export const LEGAL_FILES: { readonly [P in LegalPageId]: string } = {
  notice: "mentions-legales",
  terms: "cgv",
  privacy: "confidentialite"
}

const TITLES: { readonly [P in LegalPageId]: { readonly [L in LegalLanguage]: string } } = {
  notice: { fr: "Mentions légales", en: "Legal notice" },
  terms: { fr: "Conditions générales de vente", en: "Terms of sale" },
  privacy: { fr: "Politique de confidentialité et cookies", en: "Privacy and cookies policy" }
}

const PLACEHOLDER: { readonly [L in LegalLanguage]: string } = {
  fr: "**[TEXTE PROVISOIRE — mode bac à sable]** Ce texte n'est pas un texte juridique : l'exploitant fournit le sien " +
    "dans LEGAL_DIR (fichier {file}), obligatoire en production.",
  en: "**[PLACEHOLDER — sandbox mode]** This is not a legal text: the operator provides theirs in LEGAL_DIR " +
    "(file {file}), required in production."
}

export interface LegalFile {
  readonly text: string
  /** Last modification, YYYY-MM-DD. */
  readonly modified: string
}

const invalid = (problem: string) => new InvalidSetting({ name: "LEGAL_DIR", problem })

export const readLegalFile = (path: string): Effect.Effect<LegalFile, InvalidSetting> =>
  Effect.tryPromise({
    try: async () => {
      const [text, info] = await Promise.all([readFile(path, "utf8"), stat(path)])
      return { text, modified: info.mtime.toISOString().slice(0, 10) }
    },
    catch: (e) => invalid(`cannot read ${path}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`)
  })

/** "# Title\n\nbody" → its title and body; a text without a leading "# " line keeps the page's default title. */
export const splitTitle = (text: string, fallback: string): { readonly title: string; readonly body: string } => {
  const trimmed = text.replace(/^\uFEFF/, "").trim()
  const match = /^# +(.+)\n?/.exec(trimmed)
  return match === null ? { title: fallback, body: trimmed } : { title: match[1]!.trim(), body: trimmed.slice(match[0].length).trim() }
}

/** Sandbox mode without LEGAL_DIR: every page a placeholder saying so, with the (demo) seller's mediator. */
export const placeholderLegalTexts = (seller: Seller): LegalTexts => ({ pages: placeholderPages(), placeholder: true, mediator: seller.mediator })

const placeholderPages = (): LegalTexts["pages"] => {
  const page = (id: LegalPageId) => {
    const text = (lang: LegalLanguage): LegalText => ({
      title: TITLES[id][lang],
      body: PLACEHOLDER[lang].replace("{file}", `${LEGAL_FILES[id]}.${lang}.md`),
      updatedAt: null
    })
    return { fr: text("fr"), en: text("en") }
  }
  return { notice: page("notice"), terms: page("terms"), privacy: page("privacy") }
}

/** The texts from LEGAL_DIR (every page in both languages, none empty), or the sandbox's placeholders. */
export const resolveLegalTexts = (
  dir: string | undefined,
  sandbox: boolean,
  seller: Seller,
  read: (path: string) => Effect.Effect<LegalFile, InvalidSetting> = readLegalFile
): Effect.Effect<LegalTexts, InvalidSetting> =>
  Effect.gen(function*() {
    const mediator = seller.mediator
    if (dir === undefined) {
      if (!sandbox) {
        return yield* invalid(
          "is required outside sandbox mode (the folder of the legal pages: mentions-legales, cgv, confidentialite as .fr.md and .en.md)"
        )
      }
      return placeholderLegalTexts(seller)
    }
    const one = Effect.fn(function*(id: LegalPageId, lang: LegalLanguage) {
      const name = `${LEGAL_FILES[id]}.${lang}.md`
      const file = yield* read(join(dir, name))
      const { title, body } = splitTitle(file.text, TITLES[id][lang])
      if (body === "") return yield* invalid(`${name} has no text`)
      return { title, body, updatedAt: file.modified } satisfies LegalText
    })
    const page = (id: LegalPageId) =>
      Effect.all({ fr: one(id, LEGAL_LANGUAGES[0]), en: one(id, LEGAL_LANGUAGES[1]) })
    const pages = yield* Effect.all({ notice: page(LEGAL_PAGES[0]), terms: page(LEGAL_PAGES[1]), privacy: page(LEGAL_PAGES[2]) })
    return { pages, placeholder: false, mediator }
  })
