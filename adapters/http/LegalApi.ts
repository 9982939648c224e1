// The legal pages' contract (schemas and endpoint only): GET /api/legal/:page, public and cacheable (LegalRoutes.ts
// answers it).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, NotFound } from "./ApiErrors.ts"

export const LegalPageView = Schema.Struct({
  page: Schema.Literals(["notice", "terms", "privacy"]),
  language: Schema.Literals(["fr", "en"]),
  title: Schema.String,
  /** The operator's text as written: a small Markdown subset (headings, paragraphs, lists, links), never HTML. */
  body: Schema.String,
  /** The text file's last change (YYYY-MM-DD); null for a sandbox placeholder. */
  updatedAt: Schema.NullOr(Schema.String),
  placeholder: Schema.Boolean,
  mediator: Schema.Struct({ name: Schema.String, url: Schema.String }),
  /** The privacy page's list of every cookie the platform sets; empty on the other pages. */
  cookies: Schema.Array(Schema.Struct({ name: Schema.String, setBy: Schema.String, purpose: Schema.String, lifetime: Schema.String }))
}).annotate({ identifier: "LegalPage" })

export class LegalApi extends HttpApiGroup.make("legal")
  .add(
    HttpApiEndpoint.get("page", "/:page", {
      params: { page: Schema.String },
      query: { lang: Schema.optionalKey(Schema.String) },
      success: LegalPageView,
      error: [NotFound, BadRequest]
    }).annotateMerge(OpenApi.annotations({
      summary: "A legal page",
      description: "Public, `Cache-Control: public, max-age=300`. `page`: `notice` (mentions légales), `terms` (terms of " +
        "sale), `privacy` (privacy and cookies policy); `lang`: `fr` (default) or `en`. 404 LEGAL_PAGE_NOT_FOUND for " +
        "another page, 400 INVALID_LANGUAGE for another language."
    }))
  )
  .prefix("/api/legal")
  .annotateMerge(OpenApi.annotations({
    title: "Legal pages",
    description: "The operator's mentions légales, terms of sale and privacy policy, with the consumer mediator"
  }))
{}
