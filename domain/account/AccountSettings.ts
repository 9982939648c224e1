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
  /** Staff (support, admin) sessions: the longest idle lifetime, remember-me or not, renewed by every request. */
  readonly staffSessionLifetime: Duration.Duration
  /** Staff sessions: the hard cap since sign-in. */
  readonly staffSessionAbsoluteLifetime: Duration.Duration
  readonly resetTokenLifetime: Duration.Duration
  /** The fixed window every sign-in and reset counter runs in. */
  readonly loginThrottleWindow: Duration.Duration
  /** Sign-in attempts on one account from one address per window before 429 (the owner elsewhere is not affected). */
  readonly maxFailuresPerAccountAddress: number
  /** Sign-in attempts from one address, on any accounts, per window before 429. */
  readonly maxFailuresPerAddress: number
  /**
   * Sign-in attempts on one account, from any address, per window before each further guess must wait: the pause
   * doubles from one second with every guess beyond this, up to `maxLoginDelay`. Never a lockout.
   */
  readonly maxFailuresPerAccount: number
  /** The longest pause between two guesses on one account. */
  readonly maxLoginDelay: Duration.Duration
  /** Password reset attempts (right or wrong token) from one address per window before 429. */
  readonly maxResetAttemptsPerAddress: number
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
    staffSessionLifetime: Duration.minutes(30),
    staffSessionAbsoluteLifetime: Duration.hours(12),
    resetTokenLifetime: Duration.hours(1),
    loginThrottleWindow: Duration.minutes(15),
    maxFailuresPerAccountAddress: 5,
    maxFailuresPerAddress: 30,
    maxFailuresPerAccount: 20,
    maxLoginDelay: Duration.minutes(1),
    maxResetAttemptsPerAddress: 10,
    maxResetRequestsPerAccount: 5
  }
}
