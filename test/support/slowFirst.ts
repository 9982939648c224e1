// The order in which `npm test` starts its files. Without timings from an earlier run (a fresh clone has no vitest
// cache) vitest starts the largest files first, and with two workers a long file that starts late is the run's tail.
// The files that take longest start first, longest first; the others follow in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The files of a full run that took longest, longest first, with their times in that run (seconds, hooks included),
 * made on a machine loaded about three times over by other work (2026-11-25): the order is what counts. Update it
 * when a file's time changes much (`npx vitest run` prints each file's time).
 */
export const slowFiles: ReadonlyArray<readonly [file: string, seconds: number]> = [
  ["test/app/process.test.ts", 90],
  ["test/app/productionMode.test.ts", 73],
  ["test/app/resume.test.ts", 72],
  ["test/e2e/fuzz.test.ts", 64],
  ["test/e2e/engineRecovery.test.ts", 59],
  ["test/e2e/vps.test.ts", 57],
  ["test/e2e/gameFaults.test.ts", 48],
  ["test/app/processStartStop.test.ts", 42],
  ["test/e2e/vpsFaults.test.ts", 42],
  ["test/app/cron.test.ts", 41],
  ["test/browser/panel.test.ts", 40],
  ["test/app/cluster.test.ts", 35],
  ["test/browser/safeguards.test.ts", 33],
  ["test/app/catalogCli.test.ts", 32],
  ["test/browser/journey.test.ts", 28],
  ["test/e2e/sessions.test.ts", 28],
  ["test/browser/account.test.ts", 27],
  ["test/app/reconcileCli.test.ts", 25],
  ["test/browser/csrf.test.ts", 24],
  ["test/e2e/consoleLimits.test.ts", 24],
  ["test/e2e/edgeSecurity.test.ts", 23],
  ["test/app/orderRecovery.test.ts", 22],
  ["test/app/sessionsAcrossInstances.test.ts", 20]
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
