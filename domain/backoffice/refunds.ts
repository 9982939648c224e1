// An operator gives money back from one charge, in full or in part: reserved against the charge first (never more than
// is left, however many clicks at once), given back by the gateway under the request's own key, recorded with its
// credit note in one transaction, audited there too, and the customer told. The same idempotency key is the same
// refund: a click again after a gateway outage finishes it, a double click refunds once.
import { Clock, Effect, Option, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { Ledger } from "../../ports/Ledger.ts"
import { countPayment } from "../ops/metrics.ts"
import { PaymentGateway } from "../../ports/PaymentGateway.ts"
import { RefundRequests } from "../../ports/RefundRequests.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { recordAudit } from "../audit/record.ts"
import type { LedgerEntry } from "../billing/Billing.ts"
import { recordRefund } from "../billing/invoicing/issueDocuments.ts"
import { tell } from "../billing/serviceNotices.ts"
import { Users } from "../../ports/Users.ts"
import { UserId } from "../account/User.ts"
import { listPayments } from "../billing/paymentHistory.ts"
import { CustomerNotFound, type Operator } from "./customers.ts"

/** Why an operator gives money back, as the customer's e-mail explains it (notices/templates.ts). */
export const RefundReason = Schema.Literals(["requested_by_customer", "duplicate", "goodwill", "service_problem"])
export type RefundReason = typeof RefundReason.Type

export class ChargeNotFound extends Schema.TaggedError<ChargeNotFound>()("ChargeNotFound", {}) {
  override get message() { return "No such charge." }
}

export class RefundExceedsCharge extends Schema.TaggedError<RefundExceedsCharge>()("RefundExceedsCharge", {
  refundableCents: Schema.Int
}) {
  override get message() {
    return `At most ${this.refundableCents} cents of this charge can still be refunded.`
  }
}

export class RefundKeyReused extends Schema.TaggedError<RefundKeyReused>()("RefundKeyReused", {}) {
  override get message() { return "This idempotency key was used for another refund: use a new key for a new refund." }
}

/** The gateway did not answer: the refund stays reserved, and the same request again (same key) completes it. */
export class RefundPending extends Schema.TaggedError<RefundPending>()("RefundPending", {}) {
  override get message() {
    return "The payment service cannot be reached right now. The refund is reserved: send the same request again to complete it."
  }
}

export interface RefundAsked {
  readonly chargeId: string
  readonly amountCents: number
  readonly idempotencyKey: string
  readonly reason: RefundReason
}

export const issueRefund = Effect.fn("issueRefund")(function*(operator: Operator, asked: RefundAsked) {
  const ledger = yield* Ledger
  const requests = yield* RefundRequests
  const random = yield* SecureRandom.SecureRandom
  const charge = yield* ledger.entry(asked.chargeId)
  if (Option.isNone(charge) || charge.value.kind !== "charge") return yield* new ChargeNotFound()
  const reservation = yield* requests.reserve({
    id: yield* random.uuidV4(),
    chargeId: asked.chargeId,
    idempotencyKey: asked.idempotencyKey,
    amountCents: asked.amountCents,
    reason: asked.reason,
    requestedBy: operator.id,
    requestedAt: new Date(yield* Clock.currentTimeMillis)
  })
  switch (reservation._tag) {
    case "NoSuchCharge":
      return yield* new ChargeNotFound()
    case "KeyReused":
      return yield* new RefundKeyReused()
    case "Exceeds":
      return yield* new RefundExceedsCharge({ refundableCents: reservation.refundableCents })
  }
  const request = reservation.request
  const refund = yield* (yield* PaymentGateway).refund({
    charge: charge.value.reference,
    amountCents: request.amountCents,
    idempotencyKey: `refund-request:${request.id}`
  }).pipe(Effect.mapError(() => new RefundPending()))
  const entryId = request.refundEntryId ?? (yield* random.uuidV4())
  const creditNote = yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    const before = yield* requests.refundable(asked.chargeId)
    const note = yield* recordRefund({
      id: entryId,
      userId: charge.value.userId,
      subscriptionId: charge.value.subscriptionId,
      orderId: charge.value.orderId,
      kind: "refund",
      amountCents: request.amountCents,
      reference: `${charge.value.reference}:${refund.reference}`,
      createdAt: new Date(yield* Clock.currentTimeMillis)
    }, charge.value.reference)
    // The click that completes the request records it (a double click waits on the ledger entry, then finds it done).
    if (yield* requests.complete(request.id, entryId)) {
      yield* countPayment("refund", "refunded")
      yield* recordAudit({
        actorId: operator.id,
        actorRole: operator.role,
        action: "staff.refund_issued",
        subjectUserId: UserId.make(charge.value.userId),
        target: { type: "charge", id: asked.chargeId },
        address: operator.address,
        // The reserved amount counts as taken in `before`: it is what was refundable before this request.
        before: { refundableCents: before + request.amountCents },
        after: { refundableCents: before },
        details: { amountCents: request.amountCents, reason: request.reason, refund: refund.reference, creditNote: Option.getOrNull(Option.map(note, (n) => n.number)) }
      })
    }
    return note
  }))
  // Keyed by the gateway's refund: a replay tells nobody twice.
  yield* tell({
    _tag: "RefundIssued",
    userId: charge.value.userId,
    refundId: refund.reference,
    amountCents: request.amountCents,
    reason: request.reason,
    // Attached as its PDF when the e-mail is sent.
    creditNoteId: Option.getOrNull(Option.map(creditNote, (n) => n.id))
  })
  return {
    requestId: request.id,
    amountCents: request.amountCents,
    refundableCents: yield* requests.refundable(asked.chargeId),
    creditNote: Option.getOrNull(Option.map(creditNote, (n) => ({ id: n.id, number: n.number })))
  }
})

/** A customer's charges and refunds, newest first, each charge with what is left to refund of it. */
export const customerPayments = Effect.fn("customerPayments")(function*(userId: UserId) {
  if (Option.isNone(yield* (yield* Users).findById(userId))) return yield* new CustomerNotFound()
  const requests = yield* RefundRequests
  // The newest page (100), as the customer's own history shows it.
  const entries = (yield* listPayments(userId, undefined)).payments
  return yield* Effect.forEach(entries, (entry: LedgerEntry) =>
    Effect.map(
      entry.kind === "charge" ? Effect.map(requests.refundable(entry.id), Option.some) : Effect.succeed(Option.none<number>()),
      (refundableCents) => ({ entry, refundableCents })
    ))
})
