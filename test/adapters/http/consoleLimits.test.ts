// The consoles' input limits on their own: a socket's token bucket (burst, refill, never above its capacity) and Wings'
// per-event buckets (unknown events share one). The per-user slots are the domain's: test/domain/consoles.
import { assert, describe, it } from "@effect/vitest"
import { FrameBucket, gameInputLimits } from "../../../adapters/http/consoleLimits.ts"

describe("a socket's frame bucket", () => {
  it("lets a burst of `capacity` through, then one per refill interval, never banking more than its capacity", () => {
    const bucket = new FrameBucket(3, 10, 0)
    assert.deepStrictEqual([0, 0, 0, 0].map((t) => bucket.take(t)), [true, true, true, false])
    assert.strictEqual(bucket.take(50), false)
    assert.strictEqual(bucket.take(100), true)
    // Idle for a minute: still only 3 at once.
    assert.deepStrictEqual([60_000, 60_000, 60_000, 60_000].map((t) => bucket.take(t)), [true, true, true, false])
  })

  it("game consoles: `auth` 2 per 5 s, `send command` 10 a second, every other event one shared bucket of 4", () => {
    const limits = gameInputLimits(1, 0)
    assert.deepStrictEqual([1, 2, 3].map(() => limits.event("auth", 0)), [true, true, false])
    assert.strictEqual(limits.event("auth", 2_500), true)
    assert.strictEqual(Array.from({ length: 12 }, () => limits.event("send command", 0)).filter(Boolean).length, 10)
    const others = ["set state", "send stats", "made up 1", "made up 2", "made up 3"].map((e) => limits.event(e, 0))
    assert.deepStrictEqual(others, [true, true, true, true, false])
    assert.strictEqual(limits.bucketOf("made up 1"), "other")
    assert.strictEqual(Array.from({ length: 20 }, () => limits.global(0)).filter(Boolean).length, 10)
  })

  it("a scale multiplies every limit (load tests raise it)", () => {
    const limits = gameInputLimits(100, 0)
    assert.strictEqual(Array.from({ length: 2_000 }, () => limits.event("send command", 0)).filter(Boolean).length, 1_000)
    assert.strictEqual(Array.from({ length: 2_000 }, () => limits.global(0)).filter(Boolean).length, 1_000)
  })
})
