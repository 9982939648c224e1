// How many consoles a user may hold open: at most `max`, each slot taken atomically and freed with its scope however
// the console ends; past it, TooManyConsoles.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { admitConsole, ConsoleSlots } from "../../../domain/consoles/ConsoleAdmission.ts"

describe("console slots", () => {
  it.effect("a user holds at most `max`; a slot is freed when its scope closes, also on failure; users are apart", () =>
    Effect.gen(function*() {
      const slots = yield* ConsoleSlots
      const scopes = yield* Effect.forEach([1, 2, 3], () => Scope.make())
      const taken = yield* Effect.forEach(scopes, (scope) => Scope.provide(slots.take("ada"), scope))
      assert.deepStrictEqual(taken, [true, true, false])
      assert.strictEqual(yield* Scope.provide(slots.take("bob"), scopes[2]!), true)
      yield* Scope.close(scopes[0]!, Exit.fail("the relay failed"))
      assert.strictEqual(slots.open("ada"), 1)
      assert.strictEqual(yield* Effect.scoped(slots.take("ada")), true)
      yield* Scope.close(scopes[1]!, Exit.void)
      yield* Scope.close(scopes[2]!, Exit.void)
      assert.deepStrictEqual([slots.open("ada"), slots.open("bob")], [0, 0])
    }).pipe(Effect.provide(ConsoleSlots.layer(2))))
})

describe("admitting a console", () => {
  it.effect("admits up to `max` per user, then refuses with TooManyConsoles naming the limit", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Scope.provide(admitConsole("ada"), scope)
      const refused = yield* Effect.flip(Scope.provide(admitConsole("ada"), scope))
      assert.strictEqual(refused._tag, "TooManyConsoles")
      assert.strictEqual(refused.max, 1)
      yield* Scope.close(scope, Exit.void)
      yield* Effect.scoped(admitConsole("ada"))
    }).pipe(Effect.provide(ConsoleSlots.layer(1))))
})
