// `npm run admin -- notices`, in-process on the in-memory store: the customer e-mails not sent yet, newest first, each
// with its attempts, its next attempt or "given up", and its last error; sent ones are not listed.
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryNoticeRecords from "../../adapters/fake/MemoryNoticeRecords.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { NoticeRecords } from "../../ports/NoticeRecords.ts"

const now = new Date("2026-03-02T09:00:00.000Z")

const run = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const services = Layer.mergeAll(
      MemoryOutbox.layer,
      MemoryUpstreamSecrets.layer,
      AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(1)), previous: [] }),
      Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make("")) })
    )
    const notices = Layer.succeed(NoticeRecords, yield* NoticeRecords)
    const cli = makeAdmin(services, Effect.succeed([]), undefined, undefined, undefined, undefined, undefined, notices)
    yield* Command.runWith(cli, { version: "test" })(args)
    return (yield* TestConsole.logLines).map(String).join("\n")
  })

const inCli = <A, E>(effect: Effect.Effect<A, E, NoticeRecords | NodeServices.NodeServices | TestConsole.TestConsole>) =>
  effect.pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer, MemoryNoticeRecords.layer)))

describe("admin CLI: notices", () => {
  it.effect("lists the customer e-mails not sent yet, newest first, with their state and last error", () =>
    inCli(Effect.gen(function*() {
      const notices = yield* NoticeRecords
      for (const [n, key] of ["OrderPaid:o-1", "ServiceReady:s-1", "RefundIssued:re-1"].entries()) {
        yield* notices.record({
          key,
          userId: "00000000-0000-4000-8000-000000000001",
          tag: key.split(":")[0]!,
          payload: "{}",
          createdAt: new Date(now.getTime() + n * 60_000),
          leaseUntil: new Date(now.getTime() + 3_600_000)
        })
      }
      yield* notices.markSent("OrderPaid:o-1", now)
      yield* notices.markFailed("ServiceReady:s-1", "SMTP send failed: SMTP 421", new Date("2026-03-02T10:00:00.000Z"))
      yield* notices.markFailed("RefundIssued:re-1", "SMTP send failed: SMTP 550", null)
      assert.strictEqual(yield* run(["notices"]), [
        "RefundIssued:re-1  told 2026-03-02T09:02:00.000Z  1 attempt(s), given up  last error: SMTP send failed: SMTP 550",
        "ServiceReady:s-1  told 2026-03-02T09:01:00.000Z  1 attempt(s), next attempt 2026-03-02T10:00:00.000Z  " +
        "last error: SMTP send failed: SMTP 421"
      ].join("\n"))
    })))

  it.effect("says when every e-mail went out", () =>
    inCli(Effect.gen(function*() {
      assert.strictEqual(yield* run(["notices"]), "Every customer e-mail has been sent.")
    })))
})
