// What an operator tunes about customer notices; the app builds it from configuration.
import { Context, Duration } from "effect"

export class NoticeSettings extends Context.Service<NoticeSettings, {
  /** Public origin of the panel, for links in e-mails (no trailing slash). */
  readonly publicUrl: string
  /** How long one attempt owns a notice: longer than the mail server may take to answer (SmtpMailer: 30 s). */
  readonly lease: Duration.Duration
  /** The pause after the first failed attempt; it doubles with every failure, up to `maxRetryDelay`. */
  readonly retryBaseDelay: Duration.Duration
  readonly maxRetryDelay: Duration.Duration
  /** Attempts before a notice is given up (an alert is logged). */
  readonly maxAttempts: number
}>()("zh/domain/notices/NoticeSettings") {
  static readonly defaults = {
    lease: Duration.minutes(2),
    retryBaseDelay: Duration.minutes(1),
    maxRetryDelay: Duration.hours(1),
    maxAttempts: 20
  }
}
