// One UnitOfWork contract: every implementation hands back the inner effect's outcome unchanged; the Postgres one
// also makes the repository calls inside it all-or-nothing (the identity fake cannot, so it is not asked to).
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import * as IdentityUnitOfWork from "../../adapters/fake/IdentityUnitOfWork.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as PgUnitOfWork from "../../adapters/postgres/PgUnitOfWork.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { sqlBackends } from "../support/databases.ts"
import { newUser } from "../support/userMother.ts"

class StepFailed extends Schema.TaggedError<StepFailed>()("StepFailed", { step: Schema.Number }) {}

const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(UnitOfWork, (uow) => uow.transaction(effect))
const insert = (email: string) => Effect.flatMap(Users, (users) => users.insert(newUser(email)))
const isStored = (email: string) =>
  Effect.flatMap(Users, (users) => Effect.map(users.findByEmail(email), Option.isSome))

const contract = (
  name: string,
  impl: Layer.Layer<UnitOfWork | Users, unknown>,
  options: { readonly atomic: boolean }
) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("hands back the inner effect's success unchanged", () =>
      Effect.gen(function*() {
        const value = { answer: 42 }
        assert.strictEqual(yield* transaction(Effect.succeed(value)), value)
      }))

    it.effect("hands back the inner effect's failure unchanged", () =>
      Effect.gen(function*() {
        const failure = new StepFailed({ step: 1 })
        assert.strictEqual(yield* Effect.flip(transaction(Effect.fail(failure))), failure)
      }))

    it.effect("a successful unit commits every step", () =>
      Effect.gen(function*() {
        const created = yield* transaction(Effect.gen(function*() {
          const first = yield* insert("uow-commit-1@example.com")
          yield* insert("uow-commit-2@example.com")
          return first
        }))
        assert.strictEqual(created.email, "uow-commit-1@example.com")
        assert.isTrue(yield* isStored("uow-commit-1@example.com"))
        assert.isTrue(yield* isStored("uow-commit-2@example.com"))
      }))

    if (!options.atomic) return

    it.effect("a unit whose second step fails leaves nothing of the first", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(transaction(Effect.gen(function*() {
          yield* insert("uow-rollback@example.com")
          return yield* new StepFailed({ step: 2 })
        })))
        assert.deepStrictEqual(error, new StepFailed({ step: 2 }))
        assert.isFalse(yield* isStored("uow-rollback@example.com"))
      }))

    it.effect("a unit whose second repository call is refused leaves nothing of the first", () =>
      Effect.gen(function*() {
        yield* insert("uow-taken@example.com")
        const error = yield* Effect.flip(transaction(Effect.gen(function*() {
          yield* insert("uow-refused@example.com")
          yield* insert("UOW-taken@example.com")
        })))
        assert.strictEqual(error._tag, "EmailTaken")
        assert.isFalse(yield* isStored("uow-refused@example.com"))
      }))

    it.effect("a unit whose second step dies leaves nothing of the first", () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(transaction(Effect.gen(function*() {
          yield* insert("uow-defect@example.com")
          return yield* Effect.die("boom")
        })))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
        assert.isFalse(yield* isStored("uow-defect@example.com"))
      }))
  })

describe("UnitOfWork contract", () => {
  contract("identity (in memory)", Layer.mergeAll(IdentityUnitOfWork.layer, MemoryUsers.layer), { atomic: false })
  for (const [backend, db] of sqlBackends()) {
    contract(backend, PgUnitOfWork.layer.pipe(Layer.provideMerge(PgUsers.layer), Layer.provide(db)), { atomic: true })
  }
})
