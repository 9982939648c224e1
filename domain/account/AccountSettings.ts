// The account rules an operator can tune; the app builds this from configuration.
import { Context, Duration } from "effect"

export interface AccountSettingsShape {
  /** Public origin of the panel, for links in e-mails (no trailing slash). */
  readonly publicUrl: string
  /** Lifetime of a remember-me session, renewed by every request (12 h). */
  readonly rememberMeLifetime: Duration.Duration
  /** Idle lifetime of a browser-session login, renewed by every request. */
  readonly sessionIdleLifetime: Duration.Duration
  /** Hard cap on a session however active it is. */
  readonly sessionAbsoluteLifetime: Duration.Duration
  readonly resetTokenLifetime: Duration.Duration
  readonly loginThrottleWindow: Duration.Duration
  readonly maxFailuresPerAccount: number
  readonly maxFailuresPerAddress: number
  /** Reset e-mails one account can be sent per reset-token lifetime; more requests are silently ignored. */
  readonly maxResetRequestsPerAccount: number
}

export class AccountSettings extends Context.Service<AccountSettings, AccountSettingsShape>()(
  "zh/domain/AccountSettings"
) {
  static readonly defaults: Omit<AccountSettingsShape, "publicUrl"> = {
    rememberMeLifetime: Duration.hours(12),
    sessionIdleLifetime: Duration.hours(2),
    sessionAbsoluteLifetime: Duration.days(7),
    resetTokenLifetime: Duration.hours(1),
    loginThrottleWindow: Duration.minutes(15),
    maxFailuresPerAccount: 5,
    maxFailuresPerAddress: 30,
    maxResetRequestsPerAccount: 5
  }
}
