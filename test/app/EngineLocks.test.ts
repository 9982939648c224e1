// The guard on the engine's shard-lock storage: a refresh that fails is made again once; unless that second answer
// confirms every shard, refreshes of held shards keep failing (so Sharding marks the lock storage unhealthy and takes
// every shard again) until the storage answers its probe. The whole recovery is tested end to end in
// test/e2e/engineRecovery.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { RunnerAddress, RunnerStorage, ShardId } from "effect/cluster"
import { PersistenceError } from "effect/cluster/ClusterError"
import { guardLocks } from "../../app/EngineLocks.ts"

type Answer = "all" | "none" | "fail" | "hang"

/** A storage whose refreshes answer `answers` in turn (then "all"); `calls` counts the refreshes that reached it. */
const scripted = (answers: ReadonlyArray<Answer>) =>
  Effect.map(RunnerStorage.makeMemory, (memory) => {
    const queue = [...answers]
    const state = { calls: 0 }
    const storage = RunnerStorage.RunnerStorage.of({
      ...memory,
      refresh: (_address, shardIds) =>
        Effect.suspend(() => {
          state.calls++
          switch (queue.shift() ?? "all") {
            case "all":
              return Effect.succeed(Array.from(shardIds))
            case "none":
              return Effect.succeed([])
            case "fail":
              return Effect.fail(new PersistenceError({ cause: new Error("Connection closed") }))
            case "hang":
              return Effect.never
          }
        })
    })
    return { guarded: guardLocks(storage), state }
  })

const self = RunnerAddress.make("localhost", 34431)
const shards = [ShardId.make("default", 1), ShardId.make("default", 2)]

describe("guardLocks", () => {
  it.effect("passes a refresh that succeeds through, asked once", () =>
    Effect.gen(function*() {
      const { guarded, state } = yield* scripted(["all"])
      assert.deepStrictEqual((yield* guarded.refresh(self, shards)).map(String), ["default:1", "default:2"])
      assert.strictEqual(state.calls, 1)
    }))

  it.effect("lets Sharding see shards really lost, when nothing failed", () =>
    Effect.gen(function*() {
      const { guarded } = yield* scripted(["none", "all"])
      assert.deepStrictEqual(yield* guarded.refresh(self, shards), [])
      assert.strictEqual((yield* guarded.refresh(self, shards)).length, 2)
    }))

  it.effect("makes a failed refresh again on the replaced connection: confirmed, nothing is held against it", () =>
    Effect.gen(function*() {
      const { guarded, state } = yield* scripted(["fail", "all", "all"])
      assert.strictEqual((yield* guarded.refresh(self, shards)).length, 2)
      assert.strictEqual(state.calls, 2)
      assert.strictEqual((yield* guarded.refresh(self, [shards[0]!])).length, 1)
      assert.strictEqual(state.calls, 3)
    }))

  for (const [second, what] of [["none", "the locks went with the connection"], ["fail", "the database is still away"]] as const) {
    it.effect(`fails the refreshes of held shards until the probe succeeds, when ${what}`, () =>
      Effect.gen(function*() {
        const { guarded, state } = yield* scripted(["fail", second, "fail", "all", "all"])
        assert.isTrue(Exit.isFailure(yield* Effect.exit(guarded.refresh(self, [shards[0]!]))))
        // Sharding's periodic refresh: fails at once, without asking the storage.
        assert.isTrue(Exit.isFailure(yield* Effect.exit(guarded.refresh(self, shards))))
        assert.strictEqual(state.calls, 2)
        // Its probe while the database is away fails, and changes nothing.
        assert.isTrue(Exit.isFailure(yield* Effect.exit(guarded.refresh(self, []))))
        assert.isTrue(Exit.isFailure(yield* Effect.exit(guarded.refresh(self, shards))))
        // Once the probe succeeds, refreshes reach the storage again.
        assert.deepStrictEqual(yield* guarded.refresh(self, []), [])
        assert.strictEqual((yield* guarded.refresh(self, shards)).length, 2)
        assert.strictEqual(state.calls, 5)
      }))
  }

  it.effect("counts a refresh its caller gave up on as failed", () =>
    Effect.gen(function*() {
      const { guarded, state } = yield* scripted(["hang"])
      const fiber = yield* Effect.forkChild(guarded.refresh(self, shards))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(guarded.refresh(self, shards))))
      assert.strictEqual(state.calls, 1)
    }))
})
