// One VpsRecords contract, run against the in-memory fake, embedded PGlite and (when configured) real Postgres.
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import * as MemoryUsers from "../../adapters/fake/MemoryUsers.ts"
import * as MemoryVpsRecords from "../../adapters/fake/MemoryVpsRecords.ts"
import * as PgOrders from "../../adapters/postgres/PgOrders.ts"
import * as PgSubscriptions from "../../adapters/postgres/PgSubscriptions.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import * as PgVpsRecords from "../../adapters/postgres/PgVpsRecords.ts"
import { Vps, VpsId } from "../../domain/vps/Vps.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { Users } from "../../ports/Users.ts"
import { type SnapshotClaimOutcome, type SnapshotWork, VpsRecords } from "../../ports/VpsRecords.ts"
import { sqlBackends } from "../support/databases.ts"
import { subscriptionOf } from "../support/subscriptionMother.ts"
import { newUser } from "../support/userMother.ts"

const builtAt = new Date("2026-03-01T10:00:00.000Z")
const later = (minutes: number) => new Date(builtAt.getTime() + minutes * 60_000)

const customer = Effect.map(
  Effect.flatMap(Users, (users) => users.insert(newUser(`vps-${randomUUID()}@example.com`))),
  (user) => user.id
)

/** An order and its subscription for `userId` (VPS records reference both), and the VPS step 6 would record. */
const provisioned = (userId: string, createdAt: Date = builtAt) =>
  Effect.gen(function*() {
    const subscription = yield* subscriptionOf(userId, { at: createdAt, periodEnd: later(60 * 24 * 31) })
    return new Vps({
      id: VpsId.make(randomUUID()),
      userId,
      subscriptionId: subscription.id,
      orderId: subscription.orderId,
      planId: "vps-s",
      cluster: "pve-par",
      node: "pve1",
      vmid: 100_123,
      hostname: "web-1.example.com",
      templateId: "debian-12",
      address: "203.0.113.10",
      status: "running",
      graceUntil: null,
      createdAt,
      destroyedAt: null
    })
  })

/** A recorded VPS of a new customer, for claims on its snapshot names. */
const recordedVps = Effect.flatMap(
  Effect.flatMap(customer, (userId) => provisioned(userId)),
  (vps) => Effect.flatMap(VpsRecords, (records) => records.create(vps, "v1:sealed"))
)

/** A claim for `work` on `name`, made at `at` for 15 minutes. */
const claimAt = (vpsId: string, name: string, work: SnapshotWork, at: Date = builtAt, id: string = randomUUID()) =>
  Effect.flatMap(VpsRecords, (records) =>
    records.claimSnapshotName({ id, vpsId, name, work, now: at, expiresAt: new Date(at.getTime() + 15 * 60_000) }))

const claimed = (othersBeingTaken: ReadonlyArray<string>): SnapshotClaimOutcome => ({ _tag: "Claimed", othersBeingTaken })
/** The outcome with the other creations' names in order (a claim names them in no particular order). */
const sorted = (outcome: SnapshotClaimOutcome): SnapshotClaimOutcome =>
  outcome._tag === "Claimed" ? claimed([...outcome.othersBeingTaken].sort()) : outcome

const current = (id: string) => Effect.map(Effect.flatMap(VpsRecords, (records) => records.get(id)), Option.getOrThrow)

const contract = (name: string, impl: Layer.Layer<VpsRecords | Subscriptions | Orders | Users, unknown>) =>
  layer(impl, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a created VPS reads back whole by id, by subscription and in its owner's list", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* provisioned(yield* customer)
        assert.deepStrictEqual(yield* records.create(vps, "v1:sealed"), vps)
        assert.deepStrictEqual(yield* current(vps.id), vps)
        assert.deepStrictEqual(yield* records.bySubscription(vps.subscriptionId), Option.some(vps))
        assert.deepStrictEqual(yield* records.forUser(vps.userId), [vps])
      }))

    it.effect("unknown ids, subscriptions and owners find nothing", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        assert.isTrue(Option.isNone(yield* records.get(randomUUID())))
        assert.isTrue(Option.isNone(yield* records.bySubscription(randomUUID())))
        assert.deepStrictEqual(yield* records.forUser(randomUUID()), [])
      }))

    it.effect("a retried creation for the same order returns the record created the first time", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* provisioned(yield* customer)
        yield* records.create(vps, "v1:first")
        const retry = new Vps({ ...vps, id: VpsId.make(randomUUID()), vmid: 100_999, createdAt: later(5) })
        const retried = yield* records.create(retry, "v1:second")
        assert.deepStrictEqual(retried, vps)
        assert.deepStrictEqual(yield* records.forUser(vps.userId), [vps])
      }))

    it.effect("ten creations for one order at the same time all return one record", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* provisioned(yield* customer)
        const created = yield* Effect.all(
          Array.from({ length: 10 }, () => records.create(new Vps({ ...vps, id: VpsId.make(randomUUID()) }), "v1:raced")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(new Set(created.map((v) => v.id)).size, 1)
        assert.deepStrictEqual(yield* records.forUser(vps.userId), created.slice(0, 1))
      }))

    it.effect("an owner's list holds each of their VPSes, oldest first", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const userId = yield* customer
        const newer = yield* records.create(yield* provisioned(userId, later(10)), "v1:a")
        const older = yield* records.create(yield* provisioned(userId, later(1)), "v1:b")
        yield* records.create(yield* provisioned(yield* customer), "v1:c")
        assert.deepStrictEqual((yield* records.forUser(userId)).map((v) => v.id), [older.id, newer.id])
      }))

    it.effect("suspension sets a grace period; a status change without options keeps it", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* records.create(yield* provisioned(yield* customer), "v1:sealed")
        yield* records.setStatus(vps.id, "suspended", { graceUntil: later(60 * 24 * 7) })
        assert.deepStrictEqual(yield* current(vps.id), new Vps({ ...vps, status: "suspended", graceUntil: later(60 * 24 * 7) }))
        yield* records.setStatus(vps.id, "stopped")
        assert.deepStrictEqual(yield* current(vps.id), new Vps({ ...vps, status: "stopped", graceUntil: later(60 * 24 * 7) }))
      }))

    it.effect("destruction clears the grace period and records when; renewal clears it too", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const userId = yield* customer
        const destroyed = yield* records.create(yield* provisioned(userId), "v1:a")
        yield* records.setStatus(destroyed.id, "suspended", { graceUntil: later(100) })
        yield* records.setStatus(destroyed.id, "destroyed", { graceUntil: null, destroyedAt: later(101) })
        assert.deepStrictEqual(
          yield* current(destroyed.id),
          new Vps({ ...destroyed, status: "destroyed", graceUntil: null, destroyedAt: later(101) })
        )
        const renewed = yield* records.create(yield* provisioned(userId), "v1:b")
        yield* records.setStatus(renewed.id, "suspended", { graceUntil: later(100) })
        yield* records.setStatus(renewed.id, "running", { graceUntil: null })
        assert.deepStrictEqual(yield* current(renewed.id), renewed)
      }))

    it.effect("live holds every VPS not destroyed, whoever owns it", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const running = yield* records.create(yield* provisioned(yield* customer), "v1:a")
        const suspended = yield* records.create(yield* provisioned(yield* customer), "v1:b")
        const destroyed = yield* records.create(yield* provisioned(yield* customer), "v1:c")
        yield* records.setStatus(suspended.id, "suspended", { graceUntil: later(100) })
        yield* records.setStatus(destroyed.id, "destroyed", { graceUntil: null, destroyedAt: later(101) })
        const live = new Set((yield* records.live).map((v) => v.id))
        assert.isTrue(live.has(running.id) && live.has(suspended.id))
        assert.isFalse(live.has(destroyed.id))
      }))

    it.effect("a snapshot name is claimed once: another claim of it, in any case, learns what its holder does", () =>
      Effect.gen(function*() {
        const vps = yield* recordedVps
        assert.deepStrictEqual(yield* claimAt(vps.id, "Before-Upgrade", "create"), claimed([]))
        assert.deepStrictEqual(yield* claimAt(vps.id, "before-upgrade", "create"), { _tag: "Held", by: "create" })
        assert.deepStrictEqual(yield* claimAt(vps.id, "BEFORE-UPGRADE", "delete"), { _tag: "Held", by: "create" })
        yield* claimAt(vps.id, "old-one", "delete")
        assert.deepStrictEqual(yield* claimAt(vps.id, "old-one", "create"), { _tag: "Held", by: "delete" })
      }))

    it.effect("a released name can be claimed again; a name is claimed per VPS", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* recordedVps
        const other = yield* recordedVps
        const id = randomUUID()
        yield* claimAt(vps.id, "nightly", "create", builtAt, id)
        assert.deepStrictEqual(yield* claimAt(other.id, "nightly", "create"), claimed([]))
        yield* records.releaseSnapshotClaim(id)
        assert.deepStrictEqual(yield* claimAt(vps.id, "nightly", "delete"), claimed([]))
      }))

    it.effect("ten claims of one name at the same time: exactly one is claimed, the others find it held", () =>
      Effect.gen(function*() {
        const vps = yield* recordedVps
        const outcomes = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => claimAt(vps.id, i % 2 === 0 ? "same-name" : "SAME-NAME", "create")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter((o) => o._tag === "Claimed").length, 1)
        assert.deepStrictEqual(outcomes.filter((o) => o._tag === "Held"), Array.from({ length: 9 }, () => ({ _tag: "Held", by: "create" })))
      }))

    it.effect("a claim names the other creations under way on the VPS, not its deletions nor other VPSes' claims", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* recordedVps
        const first = randomUUID()
        yield* claimAt(vps.id, "alpha", "create", builtAt, first)
        yield* claimAt(vps.id, "beta", "create")
        yield* claimAt(vps.id, "gone", "delete")
        yield* claimAt((yield* recordedVps).id, "elsewhere", "create")
        assert.deepStrictEqual(sorted(yield* claimAt(vps.id, "gamma", "create")), claimed(["alpha", "beta"]))
        yield* records.releaseSnapshotClaim(first)
        assert.deepStrictEqual(sorted(yield* claimAt(vps.id, "delta", "delete")), claimed(["beta", "gamma"]))
      }))

    it.effect("eight creations of different names at the same time are claimed one after another: each sees all before it", () =>
      Effect.gen(function*() {
        const vps = yield* recordedVps
        const outcomes = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => Effect.map(claimAt(vps.id, `snap-${i}`, "create"), (o) => ({ name: `snap-${i}`, o }))),
          { concurrency: "unbounded" }
        )
        const seen = outcomes.map(({ name, o }) => ({ name, before: o._tag === "Claimed" ? [...o.othersBeingTaken].sort() : [] }))
          .sort((a, b) => a.before.length - b.before.length)
        // A chain: the k-th claim saw exactly the k claims before it, so no two ever missed each other.
        seen.forEach(({ before }, k) => {
          assert.deepStrictEqual(before, seen.slice(0, k).map((s) => s.name).sort())
        })
      }))

    it.effect("a claim expires after its time: the name is free again and it no longer counts", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* recordedVps
        const abandoned = randomUUID()
        yield* claimAt(vps.id, "crashed", "create", builtAt, abandoned)
        assert.deepStrictEqual(yield* claimAt(vps.id, "crashed", "create", new Date(later(15).getTime() - 1)), { _tag: "Held", by: "create" })
        assert.deepStrictEqual(sorted(yield* claimAt(vps.id, "meanwhile", "create", later(14))), claimed(["crashed"]))
        const retaken = yield* claimAt(vps.id, "crashed", "create", later(15))
        assert.deepStrictEqual(sorted(retaken), claimed(["meanwhile"]))
        // The process that held it first ends late: its release leaves the new holder's claim alone.
        yield* records.releaseSnapshotClaim(abandoned)
        assert.deepStrictEqual(yield* claimAt(vps.id, "crashed", "delete", later(16)), { _tag: "Held", by: "create" })
      }))

    it.effect("changing the sealed root password leaves the record as it was", () =>
      Effect.gen(function*() {
        const records = yield* VpsRecords
        const vps = yield* records.create(yield* provisioned(yield* customer), "v1:old")
        yield* records.setSealedRootPassword(vps.id, "v1:new")
        assert.deepStrictEqual(yield* current(vps.id), vps)
      }))
  })

describe("VpsRecords contract", () => {
  contract(
    "in memory",
    Layer.mergeAll(MemoryVpsRecords.layer, MemorySubscriptions.layer, MemoryOrders.layer, MemoryUsers.layer)
  )
  for (const [backend, db] of sqlBackends()) {
    contract(
      backend,
      Layer.mergeAll(PgVpsRecords.layer, PgSubscriptions.layer, PgOrders.layer, PgUsers.layer).pipe(Layer.provide(db))
    )
  }
})
