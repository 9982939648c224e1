// What the platform remembers of its own health, shared by every instance: the operators' incidents (one open at a
// time per key, so an alert is sent once however many instances notice it), the signals counted over a window
// (webhook signature failures), and when each cron last started.
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"

export interface Incident {
  readonly id: number
  readonly key: string
  /** What happened, in English and in French. */
  readonly summary: { readonly en: string; readonly fr: string }
  readonly openedAt: Date
}

export interface CronRun {
  readonly name: string
  readonly lastStartedAt: Date
}

export class OpsRecords extends Context.Service<OpsRecords, {
  /** Opens an incident under `key` unless one is open already: true when this call opened it (only one caller does). */
  open(key: string, summary: Incident["summary"], at: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** Resolves the open incident of `key`: true when there was one (a later `open` is a new incident). */
  resolve(key: string, at: Date): Effect.Effect<boolean, DatabaseUnavailable>
  /** Takes the open incidents nobody was told of yet (each taken once), oldest first. */
  claimUntold(at: Date): Effect.Effect<ReadonlyArray<Incident>, DatabaseUnavailable>
  /** The telling of `id` failed: the next claim takes it again. */
  untold(id: number): Effect.Effect<void, DatabaseUnavailable>
  /** Counts one occurrence of `kind` at `at`. */
  signal(kind: string, at: Date): Effect.Effect<void, DatabaseUnavailable>
  /** Occurrences of `kind` at or after `since`. */
  signalsSince(kind: string, since: Date): Effect.Effect<number, DatabaseUnavailable>
  /** Forgets the occurrences before `before` (no window reaches that far). */
  pruneSignals(before: Date): Effect.Effect<void, DatabaseUnavailable>
  /** The cron `name` started a run at `at`. */
  cronStarted(name: string, at: Date): Effect.Effect<void, DatabaseUnavailable>
  readonly cronRuns: Effect.Effect<ReadonlyArray<CronRun>, DatabaseUnavailable>
}>()("zh/ports/OpsRecords") {}
