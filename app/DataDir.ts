// DATA_DIR holds the embedded database, the development secrets and the sandbox's state: only its owner may read
// or enter any of it. What Node creates is private through the process umask (set by app/main.ts and app/cli.ts);
// PGlite sets some modes itself, past that umask, so the wiring also makes the tree private once the embedded
// database is open (which covers an older release's tree as well).
import { Effect } from "effect"
import { chmod, lstat, readdir } from "node:fs/promises"
import { join } from "node:path"
import { InvalidSetting } from "./Config.ts"

/** The owner-only mask every process of the platform runs under: files 0600, directories 0700. */
export const PRIVATE_UMASK = 0o077

const errorCode = (e: unknown) => (e instanceof Error && "code" in e && typeof e.code === "string" ? e.code : "unknown error")

/**
 * Removes every group and other permission under `dir` (itself included), never following a symbolic link; a
 * missing directory is left alone (the embedded database creates it, privately, under the umask). Returns how many
 * entries were changed.
 */
export const restrictDataDir = (dir: string): Effect.Effect<number, InvalidSetting> =>
  Effect.tryPromise({
    try: async () => {
      let changed = 0
      const walk = async (path: string): Promise<void> => {
        const info = await lstat(path).catch((e: unknown) => {
          // Gone since its directory was read (a database file replaced meanwhile): nothing to restrict.
          if (errorCode(e) === "ENOENT") return undefined
          throw new Error(path, { cause: e })
        })
        if (info === undefined || info.isSymbolicLink()) return
        if ((info.mode & PRIVATE_UMASK) !== 0) {
          await chmod(path, info.mode & 0o700).catch((e: unknown) => {
            if (errorCode(e) !== "ENOENT") throw new Error(path, { cause: e })
          })
          changed++
        }
        if (info.isDirectory()) {
          const entries = await readdir(path).catch((e: unknown) => {
            if (errorCode(e) === "ENOENT") return []
            throw new Error(path, { cause: e })
          })
          for (const entry of entries) await walk(join(path, entry))
        }
      }
      await walk(dir)
      return changed
    },
    catch: (e) =>
      new InvalidSetting({
        name: "DATA_DIR",
        problem: `cannot make ${e instanceof Error ? e.message : dir} private to this user (${e instanceof Error ? errorCode(e.cause) : "unknown error"})`
      })
  })
