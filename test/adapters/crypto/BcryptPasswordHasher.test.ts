// The bcrypt hasher: real hashes and checks on worker threads that run at a lower CPU priority than the event loop
// (read back from /proc on Linux), so a burst of logins cannot make requests wait for a core.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { getPriority } from "node:os"
import { resolve } from "node:path"
import { expect, it as vitestIt } from "vitest"
import { make } from "../../../adapters/crypto/BcryptPasswordHasher.ts"

const password = Redacted.make("correct horse battery")
const repoRoot = resolve(import.meta.dirname, "../../..")

describe("BcryptPasswordHasher", () => {
  it.live("hashes at the configured cost and verifies only the right password", () =>
    Effect.gen(function*() {
      const hasher = yield* make(4, 2)
      const hash = yield* hasher.hash(password)
      assert.match(hash, /^\$2b\$04\$[./A-Za-z0-9]{53}$/)
      assert.isTrue(yield* hasher.verify(password, hash))
      assert.isFalse(yield* hasher.verify(Redacted.make("wrong horse battery"), hash))
      assert.isFalse(yield* hasher.verify(password, "not a bcrypt hash"))
      assert.isFalse(hasher.needsRehash(hash))
      assert.isTrue(hasher.needsRehash(hash.replace("$04$", "$03$")))
      assert.match(hasher.decoy, /^\$2b\$04\$/)
      assert.isFalse(yield* hasher.verify(password, hasher.decoy))
    }).pipe(Effect.scoped))

  it.live("many checks at once all answer right, on as many workers as asked", () =>
    Effect.gen(function*() {
      const hasher = yield* make(4, 2)
      const hash = yield* hasher.hash(password)
      const answers = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) => hasher.verify(i % 3 === 0 ? Redacted.make("nope nope") : password, hash)),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(answers, Array.from({ length: 12 }, (_, i) => i % 3 !== 0))
    }).pipe(Effect.scoped))

  // The event loop keeps whatever priority the process was started with (the suite itself may run under `nice`); a
  // suite already at nice 19 could not tell the hashing threads apart.
  const started = process.platform === "linux" ? getPriority(0) : 0
  vitestIt.skipIf(process.platform !== "linux" || started >= 19)("hashing threads run at the lowest priority (nice 19); the event loop's is untouched", () => {
    // In a process of its own: other test files of this worker may hold niced hashing threads too.
    const program = `
      import { Effect } from "effect"
      import { readdirSync, readFileSync } from "node:fs"
      import { getPriority } from "node:os"
      import { make } from ${JSON.stringify(new URL("../../../adapters/crypto/BcryptPasswordHasher.ts", import.meta.url).href)}
      const nices = () => readdirSync("/proc/self/task").map((tid) => {
        const stat = readFileSync("/proc/self/task/" + tid + "/stat", "utf8")
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
      })
      const before = nices().filter((n) => n === 19).length
      // A worker lowers its priority as its first act, before it takes any job: wait for the three to start.
      const started = (n) => Effect.gen(function*() {
        for (let i = 0; i < 200 && nices().filter((x) => x === 19).length < n; i++) yield* Effect.sleep("10 millis")
      })
      await Effect.runPromise(Effect.scoped(Effect.flatMap(make(4, 3), () => Effect.andThen(started(3), Effect.sync(() =>
        console.log(JSON.stringify({ before, during: nices().filter((n) => n === 19).length, loop: getPriority(0) })))))))
    `
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", program], { cwd: repoRoot, encoding: "utf8" })
    expect(result.status, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout.trim())).toEqual({ before: 0, during: 3, loop: started })
  })
})
