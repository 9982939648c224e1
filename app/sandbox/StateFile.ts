// A sandbox's `stateFile` option: its durable state read at start and written back after changes, at most once per
// 200 ms and once more on close. Writes run one at a time and are atomic (a temp file in the same directory, fsynced,
// then renamed over the old one), mode 0600: the documents hold cloud-init passwords and servers' files. What the
// document says, and how it is checked, belongs to each sandbox (its StateSource).
import { randomBytes } from "node:crypto"
import { mkdir, open, readFile, rename, rm } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Result } from "effect"

const THROTTLE_MS = 200

/** What the file keeps: the document for the state as it is now, and how a saved one is put back. */
export interface StateSource {
  /** Equal states must give equal text: an unchanged document is not written again. */
  encode(): string
  /**
   * Applies a saved document, or says what is wrong with it (nothing is applied then). The success is the text taken
   * as on disk from then on: a later `encode()` giving it writes nothing.
   */
  restore(text: string): Result.Result<string, string>
}

export type WriteFile = (path: string, text: string) => Promise<void>

export interface StateFileOptions {
  /** Starts every message, e.g. "sandbox PVE". */
  readonly sandbox: string
  /** What the sandbox starts with when the file is invalid, e.g. "its seed". */
  readonly seed: string
  readonly warn: (message: string) => void
  /** The atomic file write; tests pass one that observes it. */
  readonly write?: WriteFile
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

const isMissing = (e: unknown) => e instanceof Error && "code" in e && e.code === "ENOENT"

export const writeAtomically: WriteFile = async (path, text) => {
  const directory = dirname(path)
  await mkdir(directory, { recursive: true })
  const temp = join(directory, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)
  try {
    const handle = await open(temp, "wx", 0o600)
    try {
      await handle.writeFile(text, "utf8")
      // The creation mode is filtered by the umask; the file must not be readable by others whatever it is.
      await handle.chmod(0o600)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, path)
  } catch (e) {
    await rm(temp, { force: true })
    throw e
  }
}

export class StateFile {
  private readonly path: string
  private readonly source: StateSource
  private readonly options: StateFileOptions
  private readonly write: WriteFile
  private timer: NodeJS.Timeout | undefined
  /** Writes run one after the other: each waits for the previous one. */
  private writing: Promise<void> = Promise.resolve()
  /** The text on disk, so a change that changed nothing durable writes nothing. */
  private written: string | undefined
  private closed = false

  constructor(path: string, source: StateSource, options: StateFileOptions) {
    this.path = path
    this.source = source
    this.options = options
    this.write = options.write ?? writeAtomically
  }

  /**
   * Loads the file into the freshly seeded state. No file: the seed stays. An invalid file is moved aside (so the
   * next save cannot destroy it) and reported; the sandbox then starts from its seed. A file that exists but cannot
   * be read (permissions, a directory) throws: going on would overwrite state that may be fine.
   */
  async load(): Promise<void> {
    const { sandbox } = this.options
    let text: string
    try {
      text = await readFile(this.path, "utf8")
    } catch (e) {
      if (isMissing(e)) return
      throw new Error(`${sandbox}: cannot read state file ${this.path}: ${messageOf(e)}`)
    }
    const restored = this.source.restore(text)
    if (Result.isSuccess(restored)) {
      this.written = restored.success
      return
    }
    const aside = `${this.path}.invalid-${new Date().toISOString().replace(/[:.]/g, "-")}`
    let moved: string
    try {
      await rename(this.path, aside)
      moved = `moved to ${aside}`
    } catch (e) {
      moved = `could not be moved aside (${messageOf(e)}) and will be overwritten`
    }
    this.options.warn(`${sandbox}: state file ${this.path} is invalid (${restored.failure}); it was ${moved}, ` +
      `and the sandbox starts with ${this.options.seed} only`)
  }

  /** Something durable may have changed: save within 200 ms, together with whatever else changes meanwhile. */
  changed(): void {
    if (this.closed || this.timer !== undefined) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.save()
    }, THROTTLE_MS)
  }

  /** Cancels the pending save and writes the final state; later changes are not saved. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
    await this.save()
  }

  private save(): Promise<void> {
    this.writing = this.writing.then(() => this.flush())
    return this.writing
  }

  private async flush(): Promise<void> {
    const { sandbox, warn } = this.options
    let text: string
    try {
      text = this.source.encode()
    } catch (e) {
      warn(`${sandbox}: could not encode state for ${this.path}: ${messageOf(e)}`)
      return
    }
    if (text === this.written) return
    try {
      await this.write(this.path, text)
      this.written = text
    } catch (e) {
      warn(`${sandbox}: could not save state file ${this.path}: ${messageOf(e)}`)
    }
  }
}

/**
 * A sandbox's `keepState` option over the file at `path` (its messages start with `sandbox`; `seed` names what it
 * starts with when the file is invalid).
 */
export const keepInFile = (path: string, sandbox: string, seed = "its seed") =>
(source: StateSource, warn: (message: string) => void) => new StateFile(path, source, { sandbox, seed, warn })
