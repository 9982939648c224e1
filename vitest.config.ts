import { globSync } from "node:fs"
import { defineConfig } from "vitest/config"
import { SlowFirstSequencer } from "./test/support/slowFirst.ts"

/**
 * Tests that open no database (no WebAssembly), spawn no process or browser, and change no process-wide state: they
 * share their worker's modules (isolate: false), so each file does not load effect and the application again (most of
 * such a file's time). Any other test, and any file listed in `ownProcess`, runs in a process of its own.
 */
const shared = [
  "test/domain/**/*.test.ts",
  "test/adapters/**/*.test.ts",
  "test/sandbox/**/*.test.ts",
  "test/app/{CachedSessions,CachedUsers,Config,Engine,EngineLocks,UpstreamCredentials,panelTextFile,readme}.test.ts",
  "test/ci/slowFirst.test.ts",
  "test/contract/Virtualization.contract.test.ts"
]
const ownProcess = [
  // Spawns a node process and reads its own thread priorities.
  "test/adapters/crypto/BcryptPasswordHasher.test.ts"
]
const sharedFiles = globSync(shared).filter((file) => !ownProcess.includes(file))

export default defineConfig({
  test: {
    // The browser tests load the built panel: build app/web/dist first when it is missing or stale.
    globalSetup: ["test/support/chromium.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Postgres-backed suites each create their own database; two workers keep the 2-core machine responsive.
    maxWorkers: 2,
    // The longest files start first, so that none of them is left running alone at the end.
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: { name: "shared", include: sharedFiles, isolate: false }
      },
      {
        extends: true,
        // Each file in a process of its own: the embedded databases a file opens, and the WebAssembly they run, end
        // with it, so no file inherits another's.
        test: { name: "isolated", include: ["test/**/*.test.ts"], exclude: sharedFiles, isolate: true }
      }
    ]
  }
})
