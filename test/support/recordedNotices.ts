// A Notices that records every notice handed to it (duplicates included: the code under test decides what to send;
// the real Notices is the one that sends an event once), for tests of the code that sends them.
import { Effect, Layer, Ref } from "effect"
import { type CustomerNotice, Notices } from "../../domain/notices/CustomerNotice.ts"

export const makeRecordedNotices = Effect.gen(function*() {
  const sent = yield* Ref.make<ReadonlyArray<CustomerNotice>>([])
  const layer = Layer.succeed(Notices, { send: (notice) => Ref.update(sent, (all) => [...all, notice]) })
  return { sent: Ref.get(sent), layer }
})
