// bcrypt password hashing, off the event loop, on worker threads of their own that run at a lower CPU priority:
// during a burst of logins the hashes use every core the requests leave idle, and never make a request wait.
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { Effect, Layer, Queue, Redacted } from "effect"
import { PasswordHasher } from "../../ports/PasswordHasher.ts"

const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/

const costOf = (hash: string): number | undefined => {
  const m = BCRYPT_HASH.exec(hash)
  return m?.[1] === undefined ? undefined : Number(m[1])
}

/**
 * Linux keeps the nice value per thread: a worker that lowers its own leaves the event loop's as it was (elsewhere
 * the call may fail or apply to the process; hashing then simply runs at normal priority). 19, the lowest: a hash
 * takes only CPU that requests leave idle, so it never delays an answer (measured with 20 logins in flight, /me p99
 * grew 2–3× at 19 against 3–8× at 10); on an idle core it runs at full speed, so login throughput is unchanged.
 * Under CPU saturation by other work logins slow down first, which keeps signed-in customers served.
 */
const WORKER_NICE = 19

type Job =
  | { readonly op: "hash"; readonly password: string; readonly cost: number }
  | { readonly op: "compare"; readonly password: string; readonly hash: string }

/** The worker's whole program: one job at a time, answered with `{ ok, value }` or `{ ok: false, error }`. */
const workerSource = (bcryptPath: string, nice: number) => `
const { parentPort } = require("node:worker_threads")
const { setPriority } = require("node:os")
const bcrypt = require(${JSON.stringify(bcryptPath)})
try { setPriority(0, ${nice}) } catch {}
parentPort.on("message", (job) => {
  try {
    const value = job.op === "hash" ? bcrypt.hashSync(job.password, job.cost) : bcrypt.compareSync(job.password, job.hash)
    parentPort.postMessage({ ok: true, value })
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String(error && error.message) })
  }
})
`

const run = (worker: Worker, job: Job) =>
  Effect.callback<string | boolean>((resume) => {
    const onMessage = (answer: { readonly ok: boolean; readonly value?: string | boolean; readonly error?: string }) => {
      cleanup()
      resume(answer.ok ? Effect.succeed(answer.value!) : Effect.die(new Error(`bcrypt failed: ${answer.error}`)))
    }
    const onError = (error: Error) => {
      cleanup()
      resume(Effect.die(error))
    }
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
    }
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.postMessage(job)
  })

/**
 * `concurrency` workers (one per core): hashing at most that many at a time loses no throughput, and leaves libuv's
 * pool (WebCrypto, DNS, file I/O) free. Needs a Scope: the workers end with it.
 */
export const make = Effect.fn("BcryptPasswordHasher.make")(function*(cost: number, concurrency: number) {
  const bcryptPath = createRequire(import.meta.url).resolve("bcrypt")
  const idle = yield* Queue.unbounded<Worker>()
  for (let i = 0; i < Math.max(1, concurrency); i++) {
    const worker = yield* Effect.acquireRelease(
      // CommonJS source: no inherited flag (such as --input-type=module) may change how it is read.
      Effect.sync(() => new Worker(workerSource(bcryptPath, WORKER_NICE), { eval: true, execArgv: [] })),
      (w) => Effect.promise(() => w.terminate())
    )
    yield* Queue.offer(idle, worker)
  }
  const onWorker = (job: Job) =>
    Effect.acquireUseRelease(Queue.take(idle), (worker) => run(worker, job), (worker) => Queue.offer(idle, worker))

  const hash = (password: Redacted.Redacted<string>) =>
    Effect.map(onWorker({ op: "hash", password: Redacted.value(password), cost }), String)
  // The decoy costs exactly what a real account's check costs.
  const decoy = yield* hash(Redacted.make("decoy password, never a user's"))
  return PasswordHasher.of({
    hash,
    verify: (password, stored) =>
      costOf(stored) === undefined
        ? Effect.succeed(false)
        : Effect.map(onWorker({ op: "compare", password: Redacted.value(password), hash: stored }), (ok) => ok === true),
    needsRehash: (stored) => (costOf(stored) ?? 0) < cost,
    decoy
  })
})

export const layer = (cost: number, concurrency: number) => Layer.effect(PasswordHasher, make(cost, concurrency))
