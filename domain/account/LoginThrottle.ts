// Sign-in and reset throttling. Guesses are limited per account + address and per address (429 until the window
// ends, as Laravel and Pterodactyl key theirs), so a stranger guessing from one address never locks the owner out
// from another. An account guessed at from many addresses is slowed, not locked: beyond a ceiling, each guess must
// wait a pause that doubles up to a cap (429 with that Retry-After), so a botnet gets a guess a minute at most while
// the owner is kept out a minute at most.
import { Duration, Effect } from "effect"
import { LoginAttempts } from "../../ports/LoginAttempts.ts"
import { LoginThrottled, ResetThrottled } from "./AccountErrors.ts"
import { AccountSettings } from "./AccountSettings.ts"

/** Every counter needs an address; a request without one (no socket peer) shares this one. */
const UNKNOWN_ADDRESS = "unknown"

const keys = (email: string, address: string | undefined) => {
  const from = address ?? UNKNOWN_ADDRESS
  return {
    pair: `account-address:${email}|${from}`,
    address: `address:${from}`,
    account: `account:${email}`,
    /** Held by the one guess allowed per pause once the account is over its ceiling. */
    pause: `account-pause:${email}`
  }
}


const secondsUntil = (end: Date, at: Date) => Math.max(1, Math.ceil((end.getTime() - at.getTime()) / 1000))

/** The pause before the next guess once `over` guesses went beyond the ceiling: 1 s, 2 s, 4 s … up to `max`. */
export const pauseAfter = (over: number, max: Duration.Duration): number =>
  Math.min(Duration.toMillis(max), 1000 * 2 ** Math.min(over - 1, 30))

/**
 * Counts a sign-in attempt before the password is checked, so concurrent guesses cannot slip past a limit, or
 * refuses it; a refused attempt costs no hashing at all.
 */
export const admitSignIn = Effect.fn("admitSignIn")(function*(email: string, address: string | undefined, at: Date) {
  const settings = yield* AccountSettings
  const attempts = yield* LoginAttempts
  const k = keys(email, address)
  const window = Duration.toMillis(settings.loginThrottleWindow)
  const pair = yield* attempts.hit(k.pair, at, window)
  const from = yield* attempts.hit(k.address, at, window)
  const limited = [
    ...(pair.count > settings.maxFailuresPerAccountAddress ? [pair.resetsAt] : []),
    ...(from.count > settings.maxFailuresPerAddress ? [from.resetsAt] : [])
  ]
  if (limited.length > 0) {
    return yield* new LoginThrottled({ retryAfterSeconds: Math.max(...limited.map((end) => secondsUntil(end, at))) })
  }
  const account = yield* attempts.hit(k.account, at, window)
  const over = account.count - settings.maxFailuresPerAccount
  if (over > 0) {
    // One guess per pause: the first attempt after a pause ends opens the next one and goes on.
    const pause = yield* attempts.hit(k.pause, at, pauseAfter(over, settings.maxLoginDelay))
    if (pause.count > 1) {
      // Not a guess: it must not lengthen the next pause.
      yield* attempts.undo(k.account)
      return yield* new LoginThrottled({ retryAfterSeconds: secondsUntil(pause.resetsAt, at) })
    }
  }
})

/** A successful sign-in was no failure: its own counts are taken back and its address starts afresh on the account. */
export const signInSucceeded = Effect.fn("signInSucceeded")(function*(email: string, address: string | undefined) {
  const attempts = yield* LoginAttempts
  const k = keys(email, address)
  yield* attempts.clear(k.pair)
  yield* attempts.undo(k.address)
  yield* attempts.undo(k.account)
})

/**
 * After a password reset, made from `address`: its owner proved who they are, so neither the guesses of others at
 * the account nor their own from this address slow them down.
 */
export const signInLifted = Effect.fn("signInLifted")(function*(email: string, address: string | undefined) {
  const attempts = yield* LoginAttempts
  const k = keys(email, address)
  yield* attempts.clear(k.account)
  yield* attempts.clear(k.pair)
})

/** Counts a password reset attempt from `address`, or refuses it past the limit. */
export const admitReset = Effect.fn("admitReset")(function*(address: string | undefined, at: Date) {
  const settings = yield* AccountSettings
  const hit = yield* (yield* LoginAttempts).hit(
    `reset-address:${address ?? UNKNOWN_ADDRESS}`,
    at,
    Duration.toMillis(settings.loginThrottleWindow)
  )
  if (hit.count > settings.maxResetAttemptsPerAddress) {
    return yield* new ResetThrottled({ retryAfterSeconds: secondsUntil(hit.resetsAt, at) })
  }
})
