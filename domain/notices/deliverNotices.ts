// The Notices service: a notice is recorded under its event's key (the one guarantee of "once"), then its e-mail is
// sent in the background to the user's address and in the user's language as they are at that moment. A failed send
// stays recorded unsent and `retryDueNotices` (a cluster-wide cron) tries it again with a doubling pause.
import { Clock, Duration, Effect, FiberSet, Layer, Option, Semaphore } from "effect"
import { UserId } from "../account/User.ts"
import { InvoiceDocuments } from "../../ports/InvoiceDocuments.ts"
import { Invoices } from "../../ports/Invoices.ts"
import { type MailAttachment, Mailer } from "../../ports/Mailer.ts"
import { NoticeRecords, type PendingNotice } from "../../ports/NoticeRecords.ts"
import { Users } from "../../ports/Users.ts"
import { alert } from "../ops/alert.ts"
import { type CustomerNotice, Notices } from "./CustomerNotice.ts"
import { NoticeSettings } from "./NoticeSettings.ts"
import { decodeNotice, encodeNotice, noticeKey } from "./storedNotice.ts"
import { renderNotice } from "./templates.ts"

/** How many e-mails one instance sends at once, in the background and in a retry pass. */
const DELIVERIES_AT_ONCE = 4

/** When a notice whose attempt number `attempts` just failed is tried again; null once it is given up. */
export const retryAt = (settings: NoticeSettings["Service"], attempts: number, now: number): Date | null => {
  if (attempts >= settings.maxAttempts) return null
  const base = Duration.toMillis(settings.retryBaseDelay)
  const delay = Math.min(base * 2 ** Math.min(attempts - 1, 30), Duration.toMillis(settings.maxRetryDelay))
  return new Date(now + delay)
}

/** Records a failed attempt: tried again after its pause, or given up (an alert) after the last one. */
const failed = (pending: PendingNotice, detail: string) =>
  Effect.gen(function*() {
    const next = retryAt(yield* NoticeSettings, pending.attempts, yield* Clock.currentTimeMillis)
    yield* (yield* NoticeRecords).markFailed(pending.key, detail, next)
    yield* next === null
      ? alert(`customer notice ${pending.key} given up after ${pending.attempts} attempts: ${detail}`, { notice: pending.key })
      : Effect.logWarning(`customer notice ${pending.key} not sent (attempt ${pending.attempts}): ${detail}`)
  })

/** The invoice or credit note a notice names (a receipt, a refund): attached to its e-mail. */
const documentOf = (notice: CustomerNotice): string | null => {
  switch (notice._tag) {
    case "OrderPaid":
    case "RenewalPaid":
      return notice.invoiceId
    case "RefundIssued":
      return notice.creditNoteId
    default:
      return null
  }
}

/**
 * The notice's document as a PDF attachment named by its number, rendered now from the issued (immutable) document:
 * the notice keeps only its id. A document that cannot be found is a defect (it was issued in the notice's transaction).
 */
const attachmentsOf = (notice: CustomerNotice) =>
  Effect.gen(function*() {
    const id = documentOf(notice)
    if (id === null) return []
    const document = yield* (yield* Invoices).get(id)
    if (Option.isNone(document)) return yield* Effect.die(new Error(`document ${id} of a notice does not exist`))
    const pdf = yield* (yield* InvoiceDocuments).pdf(document.value)
    return [{ filename: `${document.value.number}.pdf`, contentType: "application/pdf", content: pdf }] satisfies ReadonlyArray<MailAttachment>
  })

/** One attempt at a recorded notice's e-mail; the outcome is written back to its record, never failed. */
const deliver = (pending: PendingNotice) => {
  let mailed = false
  return Effect.gen(function*() {
    const records = yield* NoticeRecords
    const settings = yield* NoticeSettings
    const giveUp = (why: string) =>
      records.markFailed(pending.key, why, null).pipe(
        Effect.andThen(alert(`customer notice ${pending.key} given up: ${why}`, { notice: pending.key }))
      )
    const notice = yield* decodeNotice(pending.payload).pipe(Effect.option)
    if (Option.isNone(notice)) return yield* giveUp("its record cannot be read")
    const user = yield* (yield* Users).findById(UserId.make(pending.userId))
    if (Option.isNone(user)) return yield* giveUp("the account no longer exists")
    const mail = renderNotice(notice.value, user.value, settings.publicUrl)
    const attachments = yield* attachmentsOf(notice.value)
    const sent = yield* (yield* Mailer).send({ to: user.value.email, ...mail, ...(attachments.length === 0 ? {} : { attachments }) })
      .pipe(Effect.result)
    if (sent._tag === "Failure") return yield* failed(pending, sent.failure.detail)
    mailed = true
    yield* records.markSent(pending.key, new Date(yield* Clock.currentTimeMillis))
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.andThen(
        Effect.logError(`customer notice ${pending.key} could not be delivered`, cause),
        // Before the mail went out (the database away, a bug), it counts as a failed attempt, so one that can never
        // go (its record names no account we can read) is given up in the end rather than leased again forever.
        // Once it went out, nothing is written: if marking it sent failed, the lease runs out and it is sent again.
        mailed ? Effect.void : Effect.ignore(failed(pending, "the delivery failed"))
      )
    ),
    Effect.withSpan("Notices.deliver")
  )
}

/**
 * Records the notice (in the caller's transaction, if any); only the caller that recorded it sends it, once that is
 * committed, in a fiber of its own so that neither a slow mail server nor a failure reaches the caller's business.
 */
const send = (inBackground: (pending: PendingNotice) => Effect.Effect<unknown>) =>
  Effect.fn("Notices.send")(function*(notice: CustomerNotice) {
    const records = yield* NoticeRecords
    const settings = yield* NoticeSettings
    const now = yield* Clock.currentTimeMillis
    const recorded = yield* records.record({
      key: noticeKey(notice),
      userId: notice.userId,
      tag: notice._tag,
      payload: encodeNotice(notice),
      createdAt: new Date(now),
      leaseUntil: new Date(now + Duration.toMillis(settings.lease))
    })
    // Inside the caller's transaction, the e-mail waits for its commit: a rolled-back event is never told.
    if (recorded !== null) yield* records.afterCommit(Effect.asVoid(inBackground(recorded)))
  })

/** The Notices service on the store, the users, the mailer and the settings it is built with. */
export const layer = Layer.effect(
  Notices,
  Effect.gen(function*() {
    const context = yield* Effect.context<NoticeRecords | NoticeSettings | Users | Mailer | Invoices | InvoiceDocuments>()
    const fibers = yield* FiberSet.make()
    // A burst of events (a lifecycle sweep, a batch of refunds) reaches the mail server a few at a time.
    const slots = yield* Semaphore.make(DELIVERIES_AT_ONCE)
    const inBackground = (pending: PendingNotice) =>
      FiberSet.run(fibers, Effect.provideContext(slots.withPermits(1)(deliver(pending)), context))
    return Notices.of({
      send: (notice) =>
        send(inBackground)(notice).pipe(
          Effect.provideContext(context),
          Effect.catchCause((cause) => Effect.logError(`customer notice ${noticeKey(notice)} could not be recorded`, cause))
        )
    })
  })
)

/** One retry pass: every unsent notice that is due, sent again (a batch at a time, a few at once). */
export const retryDueNotices = Effect.gen(function*() {
  const records = yield* NoticeRecords
  const settings = yield* NoticeSettings
  for (;;) {
    const now = yield* Clock.currentTimeMillis
    const due = yield* records.claimDue(new Date(now), new Date(now + Duration.toMillis(settings.lease)), 50)
    yield* Effect.forEach(due, deliver, { concurrency: DELIVERIES_AT_ONCE, discard: true })
    if (due.length < 50) return
  }
})
