// Who may open one more console (VPS and game together): a user holds at most `max` at once in this process, each
// for its console's life. A slot is held for the scope it was taken in and freed when that scope closes, however the
// console ends.
import { Context, Effect, Layer, Schema, type Scope } from "effect"

export class TooManyConsoles extends Schema.TaggedError<TooManyConsoles>()("TooManyConsoles", { max: Schema.Int }) {
  override get message() {
    return `At most ${this.max} consoles can be open at once; close one first.`
  }
}

export class ConsoleSlots extends Context.Service<ConsoleSlots, {
  readonly max: number
  /** True and held until the scope closes; false, nothing held, when the user already has `max` open. */
  take(userId: string): Effect.Effect<boolean, never, Scope.Scope>
  open(userId: string): number
}>()("zh/domain/ConsoleSlots") {
  static readonly layer = (max: number) =>
    Layer.sync(ConsoleSlots, () => {
      const open = new Map<string, number>()
      const release = (userId: string) =>
        Effect.sync(() => {
          const left = (open.get(userId) ?? 1) - 1
          if (left <= 0) open.delete(userId)
          else open.set(userId, left)
        })
      return ConsoleSlots.of({
        max,
        take: (userId) =>
          Effect.uninterruptible(Effect.suspend(() => {
            // Checked and counted in one synchronous step: concurrent opens cannot both take the last slot.
            const held = open.get(userId) ?? 0
            if (held >= max) return Effect.succeed(false)
            open.set(userId, held + 1)
            return Effect.as(Effect.addFinalizer(() => release(userId)), true)
          })),
        open: (userId) => open.get(userId) ?? 0
      })
    })
}

/** Admits one more console of `userId` for the current scope, or fails when they already hold the most allowed. */
export const admitConsole = (userId: string): Effect.Effect<void, TooManyConsoles, ConsoleSlots | Scope.Scope> =>
  Effect.flatMap(ConsoleSlots, (slots) =>
    Effect.flatMap(slots.take(userId), (taken) => (taken ? Effect.void : Effect.fail(new TooManyConsoles({ max: slots.max })))))
