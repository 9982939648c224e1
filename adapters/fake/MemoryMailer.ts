// In-memory Mailer: keeps every message so tests can read what would have been sent; can be told to fail.
import { Context, Effect, Layer, Ref } from "effect"
import { type MailMessage, Mailer, MailNotSent } from "../../ports/Mailer.ts"

export class SentMail extends Context.Service<SentMail, {
  readonly messages: Effect.Effect<ReadonlyArray<MailMessage>>
  failNext(detail: string): Effect.Effect<void>
}>()("zh/fake/SentMail") {}

export const layer = Layer.effectContext(Effect.gen(function*() {
  const sent = yield* Ref.make<ReadonlyArray<MailMessage>>([])
  const failure = yield* Ref.make<string | undefined>(undefined)
  const mailer = Mailer.of({
    send: (message) =>
      Effect.flatMap(Ref.getAndSet(failure, undefined), (detail) =>
        detail === undefined
          ? Ref.update(sent, (all) => [...all, message])
          : Effect.fail(new MailNotSent({ detail })))
  })
  return Context.make(Mailer, mailer).pipe(
    Context.add(SentMail, SentMail.of({ messages: Ref.get(sent), failNext: (d) => Ref.set(failure, d) }))
  )
}))
