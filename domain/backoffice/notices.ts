// An operator reads a customer's e-mails and sends one again (a customer who lost it, a mail server that bounced):
// the recorded notice rendered anew to the customer's address and language of now, sent while the operator waits,
// and audited.
import { Clock, Effect, Option, Schema } from "effect"
import { Mailer } from "../../ports/Mailer.ts"
import { NoticeRecords } from "../../ports/NoticeRecords.ts"
import { Users } from "../../ports/Users.ts"
import { UserId } from "../account/User.ts"
import { recordAudit } from "../audit/record.ts"
import { NoticeSettings } from "../notices/NoticeSettings.ts"
import { decodeNotice } from "../notices/storedNotice.ts"
import { renderNotice } from "../notices/templates.ts"
import { CustomerNotFound, type Operator } from "./customers.ts"

export class NoticeNotFound extends Schema.TaggedError<NoticeNotFound>()("NoticeNotFound", {}) {
  override get message() { return "No such e-mail." }
}

/** The mail server refused or did not answer: nothing was sent, try again. */
export class NoticeNotResent extends Schema.TaggedError<NoticeNotResent>()("NoticeNotResent", { detail: Schema.String }) {
  override get message() { return `The mail server did not take the e-mail (${this.detail}); try again in a moment.` }
}

/** The newest of a customer's e-mails. */
export const customerNotices = Effect.fn("customerNotices")(function*(userId: UserId) {
  if (Option.isNone(yield* (yield* Users).findById(userId))) return yield* new CustomerNotFound()
  return yield* (yield* NoticeRecords).ofUser(userId, 100)
})

export const resendNotice = Effect.fn("resendNotice")(function*(operator: Operator, key: string) {
  const found = yield* (yield* NoticeRecords).find(key)
  if (Option.isNone(found)) return yield* new NoticeNotFound()
  // A record no release of ours can read, or whose account is gone, is not a notice an operator can resend.
  const notice = yield* decodeNotice(found.value.payload).pipe(Effect.mapError(() => new NoticeNotFound()))
  const user = yield* (yield* Users).findById(UserId.make(found.value.userId))
  if (Option.isNone(user)) return yield* new NoticeNotFound()
  const mail = renderNotice(notice, user.value, (yield* NoticeSettings).publicUrl)
  yield* (yield* Mailer).send({ to: user.value.email, ...mail }).pipe(Effect.mapError((e) => new NoticeNotResent({ detail: e.detail })))
  yield* recordAudit({
    actorId: operator.id,
    actorRole: operator.role,
    action: "staff.notice_resent",
    subjectUserId: user.value.id,
    target: { type: "notice", id: key },
    address: operator.address,
    details: { tag: found.value.tag, to: user.value.email, at: new Date(yield* Clock.currentTimeMillis).toISOString() }
  })
})
