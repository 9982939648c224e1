// One AuditLog contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres; and,
// on the databases, the log's own guard: an UPDATE, a DELETE or a TRUNCATE of audit rows is refused.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { inspect } from "node:util"
import * as MemoryAuditLog from "../../adapters/fake/MemoryAuditLog.ts"
import * as PgAuditLog from "../../adapters/postgres/PgAuditLog.ts"
import * as PgUnitOfWork from "../../adapters/postgres/PgUnitOfWork.ts"
import { UserId } from "../../domain/account/User.ts"
import type { AuditEntry, AuditEvent } from "../../domain/audit/AuditEvent.ts"
import { AuditLog } from "../../ports/AuditLog.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { sqlBackends } from "../support/databases.ts"

const entry = (overrides: Partial<AuditEntry> = {}): AuditEntry => ({
  at: new Date("2026-03-02T09:00:00.000Z"),
  actorId: null,
  actorRole: "system",
  action: "auth.sign_in",
  subjectUserId: null,
  target: null,
  address: null,
  before: null,
  after: null,
  details: null,
  ...overrides
})

const someone = () => UserId.make(randomUUID())

const contract = (name: string, impl: Layer.Layer<AuditLog, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("keeps every field of an event, JSON values included, and reads newest first", () =>
      Effect.gen(function*() {
        const log = yield* AuditLog
        const user = someone()
        const admin = someone()
        yield* log.append(entry({ subjectUserId: user, actorId: user, actorRole: "customer", address: "203.0.113.7" }))
        yield* log.append(entry({
          at: new Date("2026-03-02T09:05:00.000Z"),
          actorId: admin,
          actorRole: "admin",
          action: "staff.role_granted",
          subjectUserId: user,
          target: { type: "user", id: user },
          before: { role: "customer" },
          after: { role: "support" },
          details: { via: "cli", nested: [1, "two", { three: true }] }
        }))
        const events = yield* log.list({ subjectUserId: user, limit: 10 })
        assert.strictEqual(events.length, 2)
        const [newest, oldest] = events
        assert.strictEqual(newest!.action, "staff.role_granted")
        assert.isTrue(Number(newest!.id) > Number(oldest!.id))
        assert.deepStrictEqual(newest!.at, new Date("2026-03-02T09:05:00.000Z"))
        assert.deepStrictEqual(newest!.target, { type: "user", id: user })
        assert.deepStrictEqual(newest!.before, { role: "customer" })
        assert.deepStrictEqual(newest!.after, { role: "support" })
        assert.deepStrictEqual(newest!.details, { via: "cli", nested: [1, "two", { three: true }] })
        assert.strictEqual(newest!.actorId, admin)
        assert.strictEqual(oldest!.address, "203.0.113.7")
        assert.isNull(oldest!.before)
        assert.isNull(oldest!.target)
      }))

    it.effect("keeps text a client sent that the database cannot hold as near as it can: lone surrogates, NUL", () =>
      Effect.gen(function*() {
        const log = yield* AuditLog
        const user = someone()
        yield* log.append(entry({ subjectUserId: user, address: "a\u0000b", details: { email: "x\ud800y\u0000z@example.com" } }))
        const [event] = yield* log.list({ subjectUserId: user, limit: 1 })
        assert.deepStrictEqual(event!.details, { email: "x\ufffdyz@example.com" })
        assert.strictEqual(event!.address, "ab")
      }))

    it.effect("filters by subject, actor and actions, and pages by keyset without gaps or repeats", () =>
      Effect.gen(function*() {
        const log = yield* AuditLog
        const user = someone()
        const other = someone()
        for (let i = 0; i < 7; i++) {
          yield* log.append(entry({ subjectUserId: user, actorId: user, action: i % 2 === 0 ? "auth.sign_in" : "vps.power", details: { i } }))
        }
        yield* log.append(entry({ subjectUserId: other, actorId: user, action: "auth.sign_in" }))
        const seen: Array<unknown> = []
        let before: string | undefined = undefined
        for (let page = 0; page < 4; page++) {
          const events: ReadonlyArray<AuditEvent> = yield* log.list({ subjectUserId: user, before, limit: 3 })
          seen.push(...events.map((e) => (e.details as { i: number }).i))
          if (events.length < 3) break
          before = events.at(-1)!.id
        }
        assert.deepStrictEqual(seen, [6, 5, 4, 3, 2, 1, 0])
        assert.strictEqual((yield* log.list({ subjectUserId: user, actions: ["vps.power"], limit: 10 })).length, 3)
        assert.strictEqual((yield* log.list({ actorId: user, limit: 100 })).length, 8)
        assert.strictEqual((yield* log.list({ subjectUserId: user, actions: [], limit: 10 })).length, 0)
      }))
  })

describe("AuditLog contract", () => {
  contract("in memory", MemoryAuditLog.layer)
  for (const [backend, db] of sqlBackends()) contract(backend, PgAuditLog.layer.pipe(Layer.provide(db)))
})

describe("the audit log in the database is append-only", () => {
  for (const [backend, db] of sqlBackends()) {
    layer(Layer.mergeAll(PgAuditLog.layer, PgUnitOfWork.layer).pipe(Layer.provideMerge(db)), {
      excludeTestServices: true,
      timeout: "60 seconds"
    })(backend, (it) => {
      it.effect("refuses UPDATE, DELETE and TRUNCATE, and the rows stay as written", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const user = someone()
          yield* (yield* AuditLog).append(entry({ subjectUserId: user, details: { kept: true } }))
          for (const statement of [
            `UPDATE audit_events SET action = 'auth.logout_all' WHERE subject_user_id = '${user}'`,
            `DELETE FROM audit_events WHERE subject_user_id = '${user}'`,
            "DELETE FROM audit_events",
            "TRUNCATE audit_events"
          ]) {
            const refused = yield* Effect.flip(sql.unsafe(statement))
            // The trigger's own words, under the privilege class of errors (the statement is not allowed, ever).
            assert.strictEqual(refused.reason._tag, "AuthorizationError", statement)
            assert.include(inspect(refused, { depth: 8 }), "audit_events is append-only", statement)
          }
          const [event] = yield* (yield* AuditLog).list({ subjectUserId: user, limit: 10 })
          assert.strictEqual(event!.action, "auth.sign_in")
          assert.deepStrictEqual(event!.details, { kept: true })
        }))

      it.effect("an event appended in a unit of work that rolls back is not kept", () =>
        Effect.gen(function*() {
          const user = someone()
          const log = yield* AuditLog
          yield* Effect.flip((yield* UnitOfWork).transaction(
            Effect.andThen(log.append(entry({ subjectUserId: user })), Effect.fail("the action failed" as const))
          ))
          assert.strictEqual((yield* log.list({ subjectUserId: user, limit: 10 })).length, 0)
        }))
    })
  }
})
