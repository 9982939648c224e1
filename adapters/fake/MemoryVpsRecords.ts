// In-memory VpsRecords: one record per order, so a retried creation gets the first one back.
import { Effect, Layer, Option, Ref } from "effect"
import { Vps } from "../../domain/vps/Vps.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"

interface Row {
  readonly vps: Vps
  readonly sealedRootPassword: string
}

/** The Postgres adapter's order: created_at, then id. */
const byCreation = (a: Vps, b: Vps) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, Row>())
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
    setSealedRootPassword: (id, sealed) => update(id, (row) => ({ ...row, sealedRootPassword: sealed }))
  })
})

export const layer = Layer.effect(VpsRecords, make)
