// In-memory VpsRecords: one record per order, so a retried creation gets the first one back; snapshot claims one per
// VPS and name (case-insensitive), each taken in one atomic step.
import { Effect, Layer, Option, Ref } from "effect"
import { Vps } from "../../domain/vps/Vps.ts"
import { type SnapshotClaim, type SnapshotClaimOutcome, VpsRecords } from "../../ports/VpsRecords.ts"

interface Row {
  readonly vps: Vps
  readonly sealedRootPassword: string
}

/** The Postgres adapter's order: created_at, then id. */
const byCreation = (a: Vps, b: Vps) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Row>())
  const claims = yield* Ref.make<ReadonlyArray<SnapshotClaim>>([])
  const find = (keep: (vps: Vps) => boolean) =>
    Effect.map(Ref.get(rows), (m) => Option.fromNullishOr([...m.values()].map((row) => row.vps).find(keep)))
  const update = (id: string, f: (row: Row) => Row) =>
    Ref.update(rows, (m) => {
      const row = m.get(id)
      return row === undefined ? m : new Map(m).set(id, f(row))
    })
  return VpsRecords.of({
    create: (vps, sealedRootPassword) =>
      Ref.modify(rows, (m): readonly [Vps | undefined, Map<string, Row>] => {
        const existing = [...m.values()].find((row) => row.vps.orderId === vps.orderId)
        if (existing !== undefined) return [existing.vps, m]
        // Like the table's other unique keys: a second record under the same id or subscription is a bug.
        if (m.has(vps.id) || [...m.values()].some((row) => row.vps.subscriptionId === vps.subscriptionId)) return [undefined, m]
        const created = new Vps({ ...vps })
        return [created, new Map(m).set(vps.id, { vps: created, sealedRootPassword })]
      }).pipe(Effect.flatMap((created) =>
        created === undefined
          ? Effect.die(`VPS ${vps.id} or one for subscription ${vps.subscriptionId} exists`)
          : Effect.succeed(created)
      )),
    get: (id) => find((vps) => vps.id === id),
    bySubscription: (subscriptionId) => find((vps) => vps.subscriptionId === subscriptionId),
    forUser: (userId) =>
      Effect.map(Ref.get(rows), (m) =>
        [...m.values()].map((row) => row.vps).filter((vps) => vps.userId === userId).sort(byCreation)),
    live: Effect.map(Ref.get(rows), (m) =>
      [...m.values()].map((row) => row.vps).filter((vps) => vps.status !== "destroyed").sort(byCreation)),
    setStatus: (id, status, options = {}) =>
      update(id, (row) => ({
        ...row,
        vps: new Vps({
          ...row.vps,
          status,
          graceUntil: options.graceUntil === undefined ? row.vps.graceUntil : options.graceUntil,
          destroyedAt: options.destroyedAt ?? row.vps.destroyedAt
        })
      })),
    setSealedRootPassword: (id, sealed) => update(id, (row) => ({ ...row, sealedRootPassword: sealed })),
    claimSnapshotName: (claim) =>
      Effect.flatMap(Ref.get(rows), (m) =>
        // Like the table's foreign key: a claim on a VPS we do not record is a caller's bug.
        !m.has(claim.vpsId)
          ? Effect.die(`no VPS ${claim.vpsId} to claim a snapshot name on`)
          : Ref.modify(claims, (all): readonly [SnapshotClaimOutcome, ReadonlyArray<SnapshotClaim>] => {
            const live = all.filter((c) => c.vpsId !== claim.vpsId || c.expiresAt.getTime() > claim.now.getTime())
            const mine = live.filter((c) => c.vpsId === claim.vpsId)
            const holder = mine.find((c) => c.name.toLowerCase() === claim.name.toLowerCase())
            if (holder !== undefined) return [{ _tag: "Held", by: holder.work }, live]
            const othersBeingTaken = mine.filter((c) => c.work === "create").map((c) => c.name)
            return [{ _tag: "Claimed", othersBeingTaken }, [...live, claim]]
          })),
    releaseSnapshotClaim: (id) => Ref.update(claims, (all) => all.filter((c) => c.id !== id))
  })
})

export const layer = Layer.effect(VpsRecords, make)
