import { defineConfig } from "vitest/config"
import { SlowFirstSequencer } from "./test/support/slowFirst.ts"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The browser tests load the built panel: build app/web/dist first when it is missing or stale.
    globalSetup: ["test/support/chromium.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file in a process of its own (the defaults, said out loud): the embedded databases a file opens, and the
    // WebAssembly they run, end with it, so no file inherits another's.
    pool: "forks",
    isolate: true,
    // Postgres-backed suites each create their own database; two workers keep the 2-core machine responsive.
    maxWorkers: 2,
    // The longest files start first, so that none of them is left running alone at the end.
    sequence: { sequencer: SlowFirstSequencer }
  }
})
