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

/** Applies a visitor's choice (`signedIn`: their account, when they have a session); returns what the browser keeps. */
export const choosePreferences = Effect.fn("choosePreferences")(function*(signedIn: Option.Option<UserId>, choice: Preferences) {
  if (choice.language !== undefined && Option.isSome(signedIn)) {
    yield* (yield* Users).setLanguage(signedIn.value, choice.language)
  }
  return choice
})
