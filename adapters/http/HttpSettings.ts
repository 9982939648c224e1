// What the HTTP edge needs to know about its deployment; the app builds it from configuration.
import { Context } from "effect"

export class HttpSettings extends Context.Service<HttpSettings, {
  /** Secure cookies (HTTPS only): on in production. */
  readonly secureCookies: boolean
  /** Read the client address from X-Forwarded-For (only behind a trusted reverse proxy). */
  readonly trustProxy: boolean
  /** Largest accepted request body, in bytes (413 beyond). */
  readonly maxBodyBytes: number
}>()("zh/http/HttpSettings") {}
