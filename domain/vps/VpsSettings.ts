// The VPS rules an operator tunes; the app builds this from configuration.
import { Context, type Duration } from "effect"

export class VpsSettings extends Context.Service<VpsSettings, {
  /** Committed vCPUs may reach `cpus × cpuOvercommit`; memory `memory × memoryOvercommit`. */
  readonly cpuOvercommit: number
  readonly memoryOvercommit: number
  /** The storage clones go to, and the free space kept on it beyond the disk itself. */
  readonly storage: string
  readonly storageMarginGiB: number
  readonly nameservers: ReadonlyArray<string>
  /** How long a lapsed VPS is kept (stopped, with its final snapshot) before it is destroyed. */
  readonly gracePeriod: Duration.Duration
  /** The pause before a clone task under way is checked again, doubling up to `max`. */
  readonly clonePoll: { readonly initial: Duration.Duration; readonly max: Duration.Duration }
}>()("zh/domain/VpsSettings") {}
