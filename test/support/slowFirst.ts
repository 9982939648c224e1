// The order in which `npm test` starts its files. Without timings from an earlier run (a fresh clone has no vitest
// cache) vitest starts the largest files first, and with two workers a long file that starts late is the run's tail.
// The files that take longest start first, longest first; the others follow in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The files of a full run that took longest, longest first, with their times in that run (seconds, hooks included),
 * made on a machine loaded several times over by other work (2026-11-25; the VPS fault test measured again after its
 * retries were shortened): the order is what counts. Update it when a file's time changes much (`npx vitest run`
 * prints each file's time).
 */
export const slowFiles: ReadonlyArray<readonly [file: string, seconds: number]> = [
  ["test/app/process.test.ts", 95],
  ["test/app/productionMode.test.ts", 68],
  ["test/app/resume.test.ts", 63],
  ["test/e2e/fuzz.test.ts", 54],
  ["test/e2e/gameFaults.test.ts", 47],
  ["test/e2e/engineRecovery.test.ts", 45],
  ["test/app/cluster.test.ts", 44],
  ["test/browser/panel.test.ts", 39],
  ["test/app/processStartStop.test.ts", 35],
  ["test/e2e/vpsFaults.test.ts", 32],
  ["test/e2e/vps.test.ts", 30],
  ["test/browser/safeguards.test.ts", 29],
  ["test/app/cli.test.ts", 27],
  ["test/app/cron.test.ts", 25],
  ["test/app/renewalRecovery.test.ts", 24],
  ["test/e2e/database.test.ts", 22],
  ["test/app/reconcileCli.test.ts", 20],
  ["test/contract/GameAllocations.contract.test.ts", 19],
  ["test/e2e/sessions.test.ts", 18],
  ["test/e2e/consoleLimits.test.ts", 17],
  ["test/e2e/accounts.test.ts", 17],
  ["test/browser/journey.test.ts", 15],
  ["test/browser/account.test.ts", 15],
  ["test/e2e/vpsSecurity.test.ts", 14],
  ["test/contract/Placement.contract.test.ts", 14]
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
