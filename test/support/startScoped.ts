// A scoped resource (a sandbox upstream) held by Promise-style test code: acquired now, released by `close()`.
import { Effect, Exit, Scope } from "effect"

export type Started<A> = A & { readonly close: () => Promise<void> }

export const startScoped = <A extends object>(acquire: Effect.Effect<A, never, Scope.Scope>): Promise<Started<A>> => {
  const scope = Scope.makeUnsafe()
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  return Effect.runPromise(Scope.provide(acquire, scope)).then(
    (value) => ({ ...value, close }),
    (error: unknown) => close().then(() => Promise.reject(error))
  )
}
