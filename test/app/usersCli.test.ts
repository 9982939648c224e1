// `npm run admin -- users grant | revoke`, in-process on fakes: the role changes, each change leaves one audit row
// with the role before and after, a repeated grant changes and records nothing, an unknown e-mail is refused.
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Command } from "effect/cli"
import { TestClock, TestConsole } from "effect/testing"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as IdentityUnitOfWork from "../../adapters/fake/IdentityUnitOfWork.ts"
import * as MemoryAuditLog from "../../adapters/fake/MemoryAuditLog.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { AuditLog } from "../../ports/AuditLog.ts"
import { Users } from "../../ports/Users.ts"
import { newUser } from "../support/userMother.ts"

const now = new Date("2026-03-02T09:00:00.000Z")

const setUp = Effect.gen(function*() {
  yield* TestClock.setTime(now.getTime())
  const users = yield* MemoryUsers.make
  const audit = yield* MemoryAuditLog.make
  const staff = Layer.mergeAll(Layer.succeed(Users, users), Layer.succeed(AuditLog, audit), IdentityUnitOfWork.layer)
  const base = Layer.mergeAll(
    MemoryUpstreamSecrets.layer,
    MemoryOutbox.layer,
    AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(1)), previous: [] }),
    Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make("")) })
  )
  const admin = Command.runWith(makeAdmin(base, Effect.succeed([]), undefined, undefined, undefined, staff), { version: "test" })
  const ada = yield* users.insert(newUser("ada@example.com"))
  return { admin, users, audit, ada }
})

const inCli = <A, E>(effect: Effect.Effect<A, E, NodeServices.NodeServices | TestConsole.TestConsole>) =>
  effect.pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer)))

const printed = Effect.map(TestConsole.logLines, (all) => all.map(String).join("\n"))

describe("admin CLI: users", () => {
  it.effect("`users grant EMAIL admin` makes the account admin and audits the change with before and after", () =>
    inCli(Effect.gen(function*() {
      const { admin, ada, audit, users } = yield* setUp
      yield* admin(["users", "grant", "ADA@example.com", "admin"])
      assert.strictEqual(Option.getOrThrow(yield* users.findById(ada.id)).role, "admin")
      assert.include(yield* printed, "ada@example.com is now admin (was customer).")
      const [event, ...rest] = yield* audit.list({ subjectUserId: ada.id, limit: 10 })
      assert.strictEqual(rest.length, 0)
      assert.strictEqual(event!.action, "staff.role_granted")
      assert.strictEqual(event!.actorRole, "system")
      assert.deepStrictEqual(event!.before, { role: "customer" })
      assert.deepStrictEqual(event!.after, { role: "admin" })
      assert.deepStrictEqual(event!.at, now)
    })))

  it.effect("a repeated grant changes nothing and records nothing; `revoke` makes a customer again", () =>
    inCli(Effect.gen(function*() {
      const { admin, ada, audit, users } = yield* setUp
      yield* admin(["users", "grant", "ada@example.com", "support"])
      yield* admin(["users", "grant", "ada@example.com", "support"])
      assert.include(yield* printed, "ada@example.com is already support.")
      yield* admin(["users", "revoke", "ada@example.com"])
      assert.strictEqual(Option.getOrThrow(yield* users.findById(ada.id)).role, "customer")
      const actions = (yield* audit.list({ subjectUserId: ada.id, limit: 10 })).map((e) => [e.action, e.after])
      assert.deepStrictEqual(actions, [
        ["staff.role_revoked", { role: "customer" }],
        ["staff.role_granted", { role: "support" }]
      ])
    })))

  it.effect("refuses an unknown e-mail and a role that is not support or admin", () =>
    inCli(Effect.gen(function*() {
      const { admin, ada, audit, users } = yield* setUp
      const unknown = yield* Effect.flip(admin(["users", "grant", "nobody@example.com", "admin"]))
      assert.include(String(unknown.message), "No account is registered under nobody@example.com.")
      yield* Effect.result(admin(["users", "grant", "ada@example.com", "root"]))
      assert.strictEqual(Option.getOrThrow(yield* users.findById(ada.id)).role, "customer")
      assert.strictEqual((yield* audit.list({ limit: 10 })).length, 0)
    })))
})
