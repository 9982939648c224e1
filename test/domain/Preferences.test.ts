// A visitor's preferences: all of them are the browser's; a signed-in user's language becomes the account's, and the
// session is looked for only when there is a language to follow.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import { choosePreferences } from "../../domain/account/Preferences.ts"
import { Users } from "../../ports/Users.ts"
import { domainEnv, registered } from "../support/domainEnv.ts"

const languageOf = (id: Parameters<Users["Service"]["findById"]>[0]) =>
  Effect.map(Effect.flatMap(Users, (users) => users.findById(id)), (user) => Option.map(user, (u) => u.language))

describe("choosing preferences", () => {
  it.effect("a signed-in user's language becomes the account's; the browser keeps every choice", () =>
    Effect.gen(function*() {
      const user = yield* registered({ language: "fr" })
      const kept = yield* choosePreferences(Effect.succeed(Option.some(user.id)), { theme: "dark", language: "en" })
      assert.deepStrictEqual(kept, { theme: "dark", language: "en" })
      assert.deepStrictEqual(yield* languageOf(user.id), Option.some("en"))
    }).pipe(Effect.provide(domainEnv())))

  it.effect("a theme alone never looks for the session, and an anonymous visitor's language stays the browser's", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make(0)
      const signedIn = Effect.as(Ref.update(asked, (n) => n + 1), Option.none())
      assert.deepStrictEqual(yield* choosePreferences(signedIn, { theme: "light", proTheme: "dark" }), { theme: "light", proTheme: "dark" })
      assert.strictEqual(yield* Ref.get(asked), 0)
      assert.deepStrictEqual(yield* choosePreferences(signedIn, { language: "en" }), { language: "en" })
      assert.strictEqual(yield* Ref.get(asked), 1)
    }).pipe(Effect.provide(domainEnv())))
})
