// What an owner can do with a VPS: see it, power it, snapshot it, reset its root password, open its console.
// Another user's VPS does not exist for them (VpsNotFound), and nothing runs on a suspended or destroyed one.
import { Clock, Duration, Effect, Option, Redacted, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { plansOf } from "../catalog/listPlansForSale.ts"
import { SecretBox } from "../../ports/SecretBox.ts"
import { Virtualization } from "../../ports/Virtualization.ts"
import { type SnapshotWork, VpsRecords } from "../../ports/VpsRecords.ts"
import { vmRefOf } from "./Lifecycle.ts"
import { generatePassword } from "./passwords.ts"
import type { Vps } from "./Vps.ts"

export class VpsNotFound extends Schema.TaggedError<VpsNotFound>()("VpsNotFound", {}) {
  override get message() {
    return "No such VPS."
  }
}

export class VpsUnavailable extends Schema.TaggedError<VpsUnavailable>()("VpsUnavailable", {
  status: Schema.String
}) {
  override get message() {
    return this.status === "suspended"
      ? "This VPS is suspended because its subscription lapsed; renew it to use it again."
      : this.status === "destroyed"
      ? "This VPS has been destroyed."
      : "This VPS is not running."
  }
}

export class SnapshotLimitReached extends Schema.TaggedError<SnapshotLimitReached>()("SnapshotLimitReached", {
  limit: Schema.Int
}) {
  override get message() {
    return `This plan keeps at most ${this.limit} snapshot(s); delete one first.`
  }
}

export class InvalidSnapshotName extends Schema.TaggedError<InvalidSnapshotName>()("InvalidSnapshotName", {}) {
  override get message() {
    return "A snapshot name starts with a letter and has 2 to 40 letters, digits, - or _ (not \"current\")."
  }
}

export class SnapshotExists extends Schema.TaggedError<SnapshotExists>()("SnapshotExists", {}) {
  override get message() {
    return "A snapshot with this name already exists."
  }
}

export class SnapshotNotFound extends Schema.TaggedError<SnapshotNotFound>()("SnapshotNotFound", {}) {
  override get message() {
    return "No such snapshot."
  }
}

export class SnapshotBusy extends Schema.TaggedError<SnapshotBusy>()("SnapshotBusy", {}) {
  override get message() {
    return "This snapshot is being taken or deleted right now; try again once that is done."
  }
}

/**
 * Proxmox's snapshot name rule (pve-configid, 2–40 characters): every snapshot has such a name; one a customer gives
 * also avoids our `final-` prefix and the reserved names.
 */
const SNAPSHOT_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{1,39}$/
const RESERVED_SNAPSHOT_NAMES = new Set(["current", "pending"])

export const ownedVps = Effect.fn("ownedVps")(function*(userId: string, vpsId: string) {
  const found = yield* (yield* VpsRecords).get(vpsId)
  if (Option.isNone(found) || found.value.userId !== userId) return yield* new VpsNotFound()
  return found.value
})

/** Usable: not suspended, not destroyed. */
const usable = (vps: Vps) =>
  vps.status === "suspended" || vps.status === "destroyed"
    ? Effect.fail(new VpsUnavailable({ status: vps.status }))
    : Effect.succeed(vps)

export const listVps = (userId: string) =>
  Effect.map(Effect.flatMap(VpsRecords, (r) => r.forUser(userId)), (all) => all.filter((v) => v.status !== "destroyed"))

export const powerVps = Effect.fn("powerVps")(function*(userId: string, vpsId: string, action: "start" | "stop" | "reset") {
  const vps = yield* Effect.flatMap(ownedVps(userId, vpsId), usable)
  const virtualization = yield* Virtualization
  const vm = vmRefOf(vps)
  if (action === "reset" && vps.status !== "running") return yield* new VpsUnavailable({ status: vps.status })
  yield* (action === "start" ? virtualization.start(vm) : action === "stop" ? virtualization.stop(vm) : virtualization.reset(vm))
  const status = action === "stop" ? "stopped" as const : "running" as const
  yield* (yield* VpsRecords).setStatus(vps.id, status)
  return yield* ownedVps(userId, vpsId)
})

/**
 * The graceful way off: the guest is asked to shut down (ACPI, or its agent) and given `timeoutSeconds`. A guest that
 * does not stop in time is left running (ShutdownTimedOut): forcing it is the owner's decision, a `stop`.
 */
export const shutdownVps = Effect.fn("shutdownVps")(function*(userId: string, vpsId: string, timeoutSeconds: number) {
  const vps = yield* Effect.flatMap(ownedVps(userId, vpsId), usable)
  yield* (yield* Virtualization).shutdown(vmRefOf(vps), timeoutSeconds)
  yield* (yield* VpsRecords).setStatus(vps.id, "stopped")
  return yield* ownedVps(userId, vpsId)
})

export const listSnapshots = Effect.fn("listSnapshots")(function*(userId: string, vpsId: string) {
  const vps = yield* Effect.flatMap(ownedVps(userId, vpsId), usable)
  return yield* (yield* Virtualization).listSnapshots(vmRefOf(vps))
})

/**
 * How long a snapshot name stays claimed by a request that never released it (its process died): far longer than
 * any snapshot task with our retries, short enough that the name comes back the same day.
 */
export const SNAPSHOT_CLAIM_LIFETIME = Duration.minutes(15)

/**
 * Runs `work` holding `name` on the VPS (DESIGN §5: the database settles the race, before the hypervisor is asked),
 * and releases it however `work` ends (a release that fails leaves the claim to expire). A name another request
 * holds fails with `held(by)` at once.
 */
const withSnapshotClaim = <A, E, R, H>(
  vps: Vps,
  name: string,
  work: SnapshotWork,
  held: (by: SnapshotWork) => H,
  use: (othersBeingTaken: ReadonlyArray<string>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const records = yield* VpsRecords
    const id = yield* (yield* SecureRandom.SecureRandom).uuidV4()
    const now = yield* Clock.currentTimeMillis
    return yield* Effect.acquireUseRelease(
      records.claimSnapshotName({
        id,
        vpsId: vps.id,
        name,
        work,
        now: new Date(now),
        expiresAt: new Date(now + Duration.toMillis(SNAPSHOT_CLAIM_LIFETIME))
      }),
      (outcome): Effect.Effect<A, E | H, R> =>
        outcome._tag === "Held" ? Effect.fail(held(outcome.by)) : use(outcome.othersBeingTaken),
      (outcome) =>
        outcome._tag === "Held" ? Effect.void : records.releaseSnapshotClaim(id).pipe(
          // The answer stands (the hypervisor did what it did); the claim lapses by itself.
          Effect.catchCause((cause) => Effect.logWarning(`snapshot claim on ${vps.id} not released; it expires by itself`, cause))
        )
    )
  })

export const createSnapshot = Effect.fn("createSnapshot")(function*(
  userId: string,
  vpsId: string,
  name: string,
  description: string
) {
  const vps = yield* Effect.flatMap(ownedVps(userId, vpsId), usable)
  if (!SNAPSHOT_NAME.test(name) || name.startsWith("final-") || RESERVED_SNAPSHOT_NAMES.has(name.toLowerCase())) {
    return yield* new InvalidSnapshotName()
  }
  const limit = Option.match(yield* plansOf("vps").any(vps.planId), { onNone: () => 0, onSome: (plan) => plan.snapshotLimit })
  const virtualization = yield* Virtualization
  const vm = vmRefOf(vps)
  const lower = (n: string) => n.toLowerCase()
  // Another request taking this name: as far as the customer is concerned it exists. One deleting it: busy.
  const held = (by: SnapshotWork) => by === "create" ? new SnapshotExists() : new SnapshotBusy()
  return yield* withSnapshotClaim(vps, name, "create", held, (othersBeingTaken) =>
    Effect.gen(function*() {
      // Listed after our claim: every creation claimed before ours has finished (so it is listed here) or still holds
      // its claim. Counting both, two requests never both take the last place; ours counts for those claimed after.
      const existing = yield* virtualization.listSnapshots(vm)
      if (existing.some((s) => lower(s.name) === lower(name))) return yield* new SnapshotExists()
      const customers = existing.filter((s) => !s.name.startsWith("final-")).map((s) => lower(s.name))
      if (new Set([...customers, ...othersBeingTaken.map(lower)]).size >= limit) return yield* new SnapshotLimitReached({ limit })
      yield* virtualization.createSnapshot(vm, name, description)
      return yield* virtualization.listSnapshots(vm)
    }))
})

export const deleteSnapshot = Effect.fn("deleteSnapshot")(function*(userId: string, vpsId: string, name: string) {
  const vps = yield* Effect.flatMap(ownedVps(userId, vpsId), usable)
  // A name no snapshot can have (from a path: anything) is missing, without asking the hypervisor.
  if (!SNAPSHOT_NAME.test(name)) return yield* new SnapshotNotFound()
  const virtualization = yield* Virtualization
  // Claimed too: deleting one that is still being taken (or already being deleted) would only meet the VM's lock.
  yield* withSnapshotClaim(vps, name, "delete", () => new SnapshotBusy(), () =>
    Effect.gen(function*() {
      const existing = yield* virtualization.listSnapshots(vmRefOf(vps))
      if (!existing.some((s) => s.name === name)) return yield* new SnapshotNotFound()
      yield* virtualization.deleteSnapshot(vmRefOf(vps), name)
    }))
})

/**
 * A new root password, shown once. With the guest agent answering it applies at once; otherwise cloud-init
 * applies it at the next boot (`appliesAtNextBoot`).
 */
export const resetRootPassword = Effect.fn("resetRootPassword")(function*(userId: string, vpsId: string) {
  const vps = yield* Effect.flatMap(ownedVps(userId, vpsId), usable)
  const virtualization = yield* Virtualization
  const password = yield* generatePassword
  const vm = vmRefOf(vps)
  const viaAgent = yield* virtualization.setGuestPassword(vm, "root", password).pipe(
    Effect.as(true),
    Effect.catchTag("GuestAgentUnavailable", () => Effect.succeed(false))
  )
  // Cloud-init re-applies its own password at boot: it must hold the new one too, or a restart undoes the reset.
  yield* virtualization.setCloudInitPassword(vm, password)
  yield* (yield* VpsRecords).setSealedRootPassword(vps.id, yield* (yield* SecretBox).seal(password, `vps:${vps.id}:root-password`))
  return { rootPassword: Redacted.value(password), appliesAtNextBoot: !viaAgent }
})
