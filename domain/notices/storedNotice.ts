// A customer notice as it is kept until its e-mail is sent (JSON in the store), and the key of the event it reports:
// one e-mail per key, whoever sends the notice and however often.
import { Effect, Schema } from "effect"
import type { CustomerNotice } from "./CustomerNotice.ts"

const Service = Schema.Struct({ subscriptionId: Schema.String, kind: Schema.String, planName: Schema.String })
const Card = Schema.Struct({ brand: Schema.String, last4: Schema.String })
const At = Schema.DateFromString
const Cents = Schema.Int
/** A document attached by reference; notices stored before documents were attached read as none. */
const DocumentId = Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null)))

/** The `CustomerNotice` union as a schema (its dates as ISO strings); `encodeNotice` and `decodeNotice` keep the two equal. */
const StoredNotice = Schema.Union([
  Schema.TaggedStruct("OrderPaid", {
    userId: Schema.String,
    orderId: Schema.String,
    planName: Schema.String,
    amountCents: Cents,
    paidAt: At,
    invoiceId: DocumentId
  }),
  Schema.TaggedStruct("OrderRetryOffered", {
    userId: Schema.String,
    orderId: Schema.String,
    failedOrderId: Schema.String,
    planName: Schema.String,
    amountCents: Cents,
    payBy: At
  }),
  Schema.TaggedStruct("ServiceReady", { userId: Schema.String, service: Service, address: Schema.String }),
  Schema.TaggedStruct("RenewalReminder", {
    userId: Schema.String,
    service: Service,
    chargeAt: At,
    amountCents: Cents,
    card: Schema.NullOr(Card)
  }),
  Schema.TaggedStruct("RenewalPaid", {
    userId: Schema.String,
    service: Service,
    periodStart: At,
    paidUntil: At,
    amountCents: Cents,
    invoiceId: DocumentId
  }),
  Schema.TaggedStruct("PaymentFailed", {
    userId: Schema.String,
    service: Service,
    periodStart: At,
    attempt: Schema.Int,
    amountCents: Cents,
    reason: Schema.String,
    nextAttemptAt: Schema.NullOr(At),
    suspendsAt: Schema.NullOr(At),
    endsAt: At,
    payUrl: Schema.String
  }),
  Schema.TaggedStruct("AuthenticationNeeded", {
    userId: Schema.String,
    service: Service,
    periodStart: At,
    amountCents: Cents,
    payUrl: Schema.String
  }),
  Schema.TaggedStruct("ServiceSuspended", { userId: Schema.String, service: Service, periodEnd: At, endsAt: At }),
  Schema.TaggedStruct("FinalWarning", { userId: Schema.String, service: Service, endsAt: At }),
  Schema.TaggedStruct("ServiceEnded", { userId: Schema.String, service: Service, endedAt: At }),
  Schema.TaggedStruct("CancellationConfirmed", { userId: Schema.String, service: Service, endsAt: At }),
  Schema.TaggedStruct("ExpressStartConfirmed", {
    userId: Schema.String,
    orderId: Schema.String,
    planName: Schema.String,
    requestedAt: At,
    paidAt: At
  }),
  Schema.TaggedStruct("WithdrawalAcknowledged", {
    userId: Schema.String,
    service: Service,
    customerName: Schema.String,
    concludedAt: At,
    declaredAt: At,
    paidCents: Cents,
    refundCents: Cents
  }),
  Schema.TaggedStruct("ServiceHeld", {
    userId: Schema.String,
    service: Service,
    holdId: Schema.String,
    placedAt: At,
    facts: Schema.String,
    ground: Schema.String
  }),
  Schema.TaggedStruct("HoldLifted", { userId: Schema.String, service: Service, holdId: Schema.String, liftedAt: At }),
  Schema.TaggedStruct("RefundIssued", {
    userId: Schema.String,
    refundId: Schema.String,
    amountCents: Cents,
    reason: Schema.String,
    creditNoteId: DocumentId
  })
])

const Json = Schema.fromJsonString(StoredNotice)
const encode = Schema.encodeSync(Json)
const decode = Schema.decodeUnknownEffect(Json)

export const encodeNotice = (notice: CustomerNotice): string => encode(notice)

/** Fails SchemaError on a stored text that is no notice (a row written by a later release, say). */
export const decodeNotice = (text: string) => decode(text)

const iso = (date: Date) => date.toISOString()

/** The event a notice reports: the same event, told twice (a cron run twice, a retried step), has the same key. */
export const noticeKey = (notice: CustomerNotice): string => {
  switch (notice._tag) {
    case "OrderPaid":
      return `OrderPaid:${notice.orderId}`
    case "OrderRetryOffered":
      return `OrderRetryOffered:${notice.orderId}`
    case "ServiceReady":
      return `ServiceReady:${notice.service.subscriptionId}`
    case "RenewalReminder":
      return `RenewalReminder:${notice.service.subscriptionId}:${iso(notice.chargeAt)}`
    case "RenewalPaid":
      return `RenewalPaid:${notice.service.subscriptionId}:${iso(notice.periodStart)}`
    case "PaymentFailed":
      return `PaymentFailed:${notice.service.subscriptionId}:${iso(notice.periodStart)}:${notice.attempt}`
    case "AuthenticationNeeded":
      return `AuthenticationNeeded:${notice.service.subscriptionId}:${iso(notice.periodStart)}`
    case "ServiceSuspended":
      return `ServiceSuspended:${notice.service.subscriptionId}:${iso(notice.periodEnd)}`
    case "FinalWarning":
      return `FinalWarning:${notice.service.subscriptionId}:${iso(notice.endsAt)}`
    case "ServiceEnded":
      return `ServiceEnded:${notice.service.subscriptionId}`
    case "CancellationConfirmed":
      return `CancellationConfirmed:${notice.service.subscriptionId}:${iso(notice.endsAt)}`
    case "ExpressStartConfirmed":
      return `ExpressStartConfirmed:${notice.orderId}`
    case "WithdrawalAcknowledged":
      return `WithdrawalAcknowledged:${notice.service.subscriptionId}`
    case "RefundIssued":
      return `RefundIssued:${notice.refundId}`
    case "ServiceHeld":
      return `ServiceHeld:${notice.holdId}`
    case "HoldLifted":
      return `HoldLifted:${notice.holdId}`
  }
}
