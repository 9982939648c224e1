// One Outbox contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as PgOutbox from "../../adapters/postgres/PgOutbox.ts"
import type { MailMessage } from "../../ports/Mailer.ts"
import { Outbox, type OutboxEntry } from "../../ports/Outbox.ts"
import { sqlBackends } from "../support/databases.ts"

const message = (label: string): MailMessage => ({
  to: `${label}@example.com`,
  subject: `Subject ${label}`,
  text: `Hello ${label},\nplain text.`,
  html: `<p>Hello <b>${label}</b></p>`
})
const sentAt = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute, 0, 123))

/** Appends one message per label, a minute apart, keeping up to `keep`. */
const appendAll = (labels: ReadonlyArray<string>, keep: number) =>
  Effect.flatMap(Outbox, (outbox) =>
    Effect.forEach(labels, (label, i) => outbox.append(message(label), sentAt(i), keep), { discard: true }))

const latest = (limit: number) => Effect.flatMap(Outbox, (outbox) => outbox.latest(limit))
const recipients = (entries: ReadonlyArray<OutboxEntry>) => entries.map((e) => e.to)

const contract = (name: string, impl: Layer.Layer<Outbox, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    // First in the block, so that on a fresh database the ids go from one digit to two within this test.
    it.effect("stays newest first once there are ten messages and more", () =>
      Effect.gen(function*() {
        const labels = Array.from({ length: 12 }, (_, i) => `many-${i + 1}`)
        yield* appendAll(labels, 100)
        assert.deepStrictEqual(recipients(yield* latest(12)), labels.map((l) => `${l}@example.com`).reverse())
      }))

    it.effect("returns the latest messages newest first, with every field", () =>
      Effect.gen(function*() {
        yield* appendAll(["fields-1", "fields-2", "fields-3"], 3)
        const entries = yield* latest(3)
        assert.deepStrictEqual(
          entries.map(({ id: _id, ...rest }) => rest),
          [
            { ...message("fields-3"), sentAt: sentAt(2) },
            { ...message("fields-2"), sentAt: sentAt(1) },
            { ...message("fields-1"), sentAt: sentAt(0) }
          ]
        )
        const ids = entries.map((e) => e.id)
        assert.deepStrictEqual(ids, [...ids].sort((a, b) => b - a))
        assert.strictEqual(new Set(ids).size, 3)
      }))

    it.effect("keeps only the newest `keep` messages", () =>
      Effect.gen(function*() {
        yield* appendAll(["keep-1", "keep-2", "keep-3", "keep-4", "keep-5"], 3)
        assert.deepStrictEqual(
          recipients(yield* latest(10)),
          ["keep-5@example.com", "keep-4@example.com", "keep-3@example.com"]
        )
      }))

    it.effect("latest returns at most `limit` messages", () =>
      Effect.gen(function*() {
        yield* appendAll(["limit-1", "limit-2", "limit-3", "limit-4"], 100)
        assert.deepStrictEqual(recipients(yield* latest(2)), ["limit-4@example.com", "limit-3@example.com"])
        assert.strictEqual((yield* latest(1)).length, 1)
        assert.deepStrictEqual(yield* latest(0), [])
      }))
  })

describe("Outbox contract", () => {
  contract("in memory", MemoryOutbox.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgOutbox.layer.pipe(Layer.provide(db)))
})
