// In-memory OpsRecords: each operation is one Ref.modify, so racing fibers see one winner, as with Postgres.
import { Effect, Layer, Ref } from "effect"
import { type CronRun, type Incident, OpsRecords } from "../../ports/OpsRecords.ts"

interface Row extends Incident {
  readonly toldAt: Date | null
  readonly resolvedAt: Date | null
}

interface State {
  readonly incidents: ReadonlyArray<Row>
  readonly signals: ReadonlyArray<{ readonly kind: string; readonly at: Date }>
  readonly crons: ReadonlyMap<string, Date>
}

const isOpen = (row: Row) => row.resolvedAt === null

export const make = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ incidents: [], signals: [], crons: new Map() })
  const incidents = (change: (rows: ReadonlyArray<Row>) => ReadonlyArray<Row>) => (s: State): State => ({ ...s, incidents: change(s.incidents) })
  return OpsRecords.of({
    open: (key, summary, at) =>
      Ref.modify(state, (s) => {
        if (s.incidents.some((r) => r.key === key && isOpen(r))) return [false, s]
        const row: Row = { id: s.incidents.length + 1, key, summary, openedAt: at, toldAt: null, resolvedAt: null }
        return [true, incidents((rows) => [...rows, row])(s)]
      }),
    resolve: (key, at) =>
      Ref.modify(state, (s) => {
        const found = s.incidents.some((r) => r.key === key && isOpen(r))
        return [found, incidents((rows) => rows.map((r) => r.key === key && isOpen(r) ? { ...r, resolvedAt: at } : r))(s)]
      }),
    claimUntold: (at) =>
      Ref.modify(state, (s) => {
        const untold = s.incidents.filter((r) => isOpen(r) && r.toldAt === null)
        const ids = new Set(untold.map((r) => r.id))
        const taken: ReadonlyArray<Incident> = untold.map(({ id, key, openedAt, summary }) => ({ id, key, summary, openedAt }))
        return [taken, incidents((rows) => rows.map((r) => ids.has(r.id) ? { ...r, toldAt: at } : r))(s)]
      }),
    untold: (id) => Ref.update(state, incidents((rows) => rows.map((r) => r.id === id ? { ...r, toldAt: null } : r))),
    signal: (kind, at) => Ref.update(state, (s) => ({ ...s, signals: [...s.signals, { kind, at }] })),
    signalsSince: (kind, since) =>
      Effect.map(Ref.get(state), (s) => s.signals.filter((e) => e.kind === kind && e.at.getTime() >= since.getTime()).length),
    pruneSignals: (before) =>
      Ref.update(state, (s) => ({ ...s, signals: s.signals.filter((e) => e.at.getTime() >= before.getTime()) })),
    cronStarted: (name, at) =>
      Ref.update(state, (s) => {
        const last = s.crons.get(name)
        return last !== undefined && last.getTime() >= at.getTime() ? s : { ...s, crons: new Map(s.crons).set(name, at) }
      }),
    cronRuns: Effect.map(Ref.get(state), (s) =>
      [...s.crons].map(([name, lastStartedAt]): CronRun => ({ name, lastStartedAt })).sort((a, b) => a.name.localeCompare(b.name)))
  })
})

export const layer = Layer.effect(OpsRecords, make)
