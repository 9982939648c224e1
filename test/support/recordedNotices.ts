// A Notices that records every notice handed to it (duplicates included: the code under test decides what to send;
// the real Notices is the one that sends an event once), for tests of the code that sends them.
import { Context, Effect, Layer, Ref } from "effect"
import { type CustomerNotice, Notices } from "../../domain/notices/CustomerNotice.ts"

export const makeRecordedNotices = Effect.gen(function*() {
  const sent = yield* Ref.make<ReadonlyArray<CustomerNotice>>([])
  const layer = Layer.succeed(Notices, { send: (notice) => Ref.update(sent, (all) => [...all, notice]) })
  return { sent: Ref.get(sent), layer }
})

/** The notices the recorded Notices of an environment was handed (`recordedNoticesLayer`), in order. */
export class RecordedNotices extends Context.Service<RecordedNotices, {
  readonly sent: Effect.Effect<ReadonlyArray<CustomerNotice>>
}>()("zh/test/RecordedNotices") {}

/** Notices that records, and RecordedNotices to read it: for the environments of domain tests. */
export const recordedNoticesLayer = Layer.effectContext(Effect.gen(function*() {
  const recorded = yield* makeRecordedNotices
  const notices = yield* Layer.build(recorded.layer)
  return Context.add(notices, RecordedNotices, RecordedNotices.of({ sent: recorded.sent }))
}))

/** The notices of one kind handed over so far. */
export const noticesOf = <Tag extends CustomerNotice["_tag"]>(tag: Tag) =>
  Effect.map(
    Effect.flatMap(RecordedNotices, (recorded) => recorded.sent),
    (all) => all.filter((n): n is Extract<CustomerNotice, { readonly _tag: Tag }> => n._tag === tag)
  )
