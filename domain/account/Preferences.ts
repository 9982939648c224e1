// A visitor's display preferences: theme, professional-area theme and language. Every one is the browser's to keep
// (functional cookies, set by the edge); a signed-in user's language is also the account's, so the e-mails we send
// them are written in it.
import { Effect, Option } from "effect"
import { Users } from "../../ports/Users.ts"
import type { Language, UserId } from "./User.ts"

export type Theme = "light" | "dark"

export interface Preferences {
  readonly theme?: Theme
  readonly proTheme?: Theme
  readonly language?: Language
}

/**
 * Applies a visitor's choice; returns what the browser keeps. `signedIn` finds their account when they have a
 * session: it is asked only when the account has something to follow (a theme alone is the browser's business).
 */
export const choosePreferences = Effect.fn("choosePreferences")(function*<E, R>(
  signedIn: Effect.Effect<Option.Option<UserId>, E, R>,
  choice: Preferences
) {
  if (choice.language !== undefined) {
    const account = yield* signedIn
    if (Option.isSome(account)) yield* (yield* Users).setLanguage(account.value, choice.language)
  }
  return choice
})
