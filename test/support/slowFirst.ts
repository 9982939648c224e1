// The order in which `npm test` starts its files. Without timings from an earlier run (a fresh clone has no vitest
// cache) vitest starts the largest files first, and with two workers a long file that starts late is the run's tail.
// The files that take longest start first, longest first; the others follow in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** Measured on a quiet 2-core machine, hooks included (seconds); update when a file's time changes much. */
export const slowFiles: ReadonlyArray<readonly [file: string, seconds: number]> = [
  ["test/e2e/engineRecovery.test.ts", 40],
  ["test/app/process.test.ts", 32],
  ["test/app/resume.test.ts", 27],
  ["test/browser/panel.test.ts", 22],
  ["test/e2e/vpsFaults.test.ts", 22],
  ["test/app/orderRecovery.test.ts", 18],
  ["test/e2e/database.test.ts", 16],
  ["test/app/productionMode.test.ts", 15],
  ["test/app/cron.test.ts", 14],
  ["test/e2e/gameFaults.test.ts", 12],
  ["test/app/processStartStop.test.ts", 11],
  ["test/e2e/fuzz.test.ts", 10],
  ["test/app/reconcileCli.test.ts", 9],
  ["test/browser/safeguards.test.ts", 9],
  ["test/browser/journey.test.ts", 8]
]

const rankOf = (moduleId: string): number => {
  const path = moduleId.replaceAll("\\", "/")
  const rank = slowFiles.findIndex(([file]) => path.endsWith(`/${file}`))
  return rank === -1 ? slowFiles.length : rank
}

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    // A stable sort: the listed files in their order, then every other file where vitest put it.
    return sorted
      .map((spec, index) => ({ spec, index, rank: rankOf(spec.moduleId) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map(({ spec }) => spec)
  }
}
