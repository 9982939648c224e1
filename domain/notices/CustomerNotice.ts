// What the platform tells a customer by e-mail, in billing's and the products' words (never a template's): each
// notice names the event it reports, so sending it twice for one event sends one e-mail (its `key`).
import { Context, type Effect } from "effect"

/** A service as the customer knows it in a notice: what it is and what it is called. */
export interface NoticeService {
  readonly subscriptionId: string
  /** The product's kind ("vps", "game", …). */
  readonly kind: string
  /** The plan's name, as sold ("VPS S", "Minecraft 4 GB"). */
  readonly planName: string
}

/** The card a charge uses, as the customer recognises it. */
export interface NoticeCard {
  readonly brand: string
  readonly last4: string
}

/**
 * A new field or notice goes into storedNotice.ts too: a notice is kept as that schema encodes it until its e-mail is
 * sent, and a retry renders what it decodes (a required field missing there fails the type check; an optional one
 * would be lost).
 */
export type CustomerNotice =
  /** The first payment of an order was taken (the receipt). */
  | {
    readonly _tag: "OrderPaid"
    readonly userId: string
    readonly orderId: string
    readonly planName: string
    readonly amountCents: number
    readonly paidAt: Date
    /** The payment's invoice, attached as its PDF when the e-mail is sent (null: none was issued). */
    readonly invoiceId: string | null
  }
  /**
   * An order whose provisioning failed (and which was refunded) can be completed now: an admin retried it as a new
   * order of the same plan and options, which the customer pays on its page (nothing is charged without them).
   */
  | {
    readonly _tag: "OrderRetryOffered"
    readonly userId: string
    /** The new order, to be paid. */
    readonly orderId: string
    /** The order that failed. */
    readonly failedOrderId: string
    readonly planName: string
    /** The first month's price, as its page will ask for it. */
    readonly amountCents: number
    /** Unpaid by then, the new order expires. */
    readonly payBy: Date
  }
  /** The service is delivered: how to reach it (an address, never a password). */
  | {
    readonly _tag: "ServiceReady"
    readonly userId: string
    readonly service: NoticeService
    /** Where it answers: an IPv4 address for a VPS, `host:port` for a game server. */
    readonly address: string
  }
  /** Seven days before an automatic charge. */
  | {
    readonly _tag: "RenewalReminder"
    readonly userId: string
    readonly service: NoticeService
    readonly chargeAt: Date
    readonly amountCents: number
    readonly card: NoticeCard | null
  }
  /** A renewal was paid: the period now ends at `paidUntil`. */
  | {
    readonly _tag: "RenewalPaid"
    readonly userId: string
    readonly service: NoticeService
    readonly periodStart: Date
    readonly paidUntil: Date
    readonly amountCents: number
    /** The payment's invoice, attached as its PDF when the e-mail is sent (null: none was issued). */
    readonly invoiceId: string | null
  }
  /** A renewal charge failed: when it is tried again, when the service stops, and where to pay now. */
  | {
    readonly _tag: "PaymentFailed"
    readonly userId: string
    readonly service: NoticeService
    readonly periodStart: Date
    /** Which attempt failed (1 = the charge at the period's end). */
    readonly attempt: number
    readonly amountCents: number
    readonly reason: string
    readonly nextAttemptAt: Date | null
    readonly suspendsAt: Date | null
    readonly endsAt: Date
    readonly payUrl: string
  }
  /** The card's bank wants the customer to approve the renewal charge: pay it on the hosted page. */
  | {
    readonly _tag: "AuthenticationNeeded"
    readonly userId: string
    readonly service: NoticeService
    readonly periodStart: Date
    readonly amountCents: number
    readonly payUrl: string
  }
  /** The period lapsed unpaid: the service is suspended until `endsAt`, when it is destroyed (VPS) or deleted. */
  | {
    readonly _tag: "ServiceSuspended"
    readonly userId: string
    readonly service: NoticeService
    readonly periodEnd: Date
    readonly endsAt: Date
  }
  /** Two days before a suspended service is destroyed or deleted. */
  | {
    readonly _tag: "FinalWarning"
    readonly userId: string
    readonly service: NoticeService
    readonly endsAt: Date
  }
  /** The service is gone for good (a VPS destroyed after its final snapshot, a game server deleted). */
  | {
    readonly _tag: "ServiceEnded"
    readonly userId: string
    readonly service: NoticeService
    readonly endedAt: Date
  }
  /** The customer cancelled: the service runs until the period's end, and is not charged again. */
  | {
    readonly _tag: "CancellationConfirmed"
    readonly userId: string
    readonly service: NoticeService
    readonly endsAt: Date
  }
  /**
   * A consumer's paid order, with the express request made at order to start the service before the 14-day withdrawal
   * period ends (and what it means: the withdrawal right remains, a withdrawal is refunded pro rata).
   */
  | {
    readonly _tag: "ExpressStartConfirmed"
    readonly userId: string
    readonly orderId: string
    readonly planName: string
    readonly requestedAt: Date
    readonly paidAt: Date
  }
  /** The acknowledgement of a consumer's withdrawal: what was declared, by whom, and when (date and time). */
  | {
    readonly _tag: "WithdrawalAcknowledged"
    readonly userId: string
    readonly service: NoticeService
    readonly customerName: string
    /** The contract's conclusion (its first payment). */
    readonly concludedAt: Date
    readonly declaredAt: Date
    readonly paidCents: number
    readonly refundCents: number
  }
  /** Money given back. `refundId` is the refund's own reference (one notice per refund). */
  | {
    readonly _tag: "RefundIssued"
    readonly userId: string
    readonly refundId: string
    readonly amountCents: number
    readonly reason: string
    /** The refund's credit note, attached as its PDF when the e-mail is sent (null: none was issued). */
    readonly creditNoteId: string | null
  }

  /**
   * An operator suspended the service: the statement of reasons a hosting provider owes (DSA art. 17): the decision
   * and its scope, the facts, the ground, that a person decided it, and the redress open to the customer.
   */
  | {
    readonly _tag: "ServiceHeld"
    readonly userId: string
    readonly service: NoticeService
    /** The hold's id (one notice per hold). */
    readonly holdId: string
    readonly placedAt: Date
    readonly facts: string
    /** One of ServiceHold.ts's grounds, explained in the reader's language. */
    readonly ground: string
  }
  /** The operator lifted the hold: the service is back (or, if its period lapsed meanwhile, can be renewed). */
  | {
    readonly _tag: "HoldLifted"
    readonly userId: string
    readonly service: NoticeService
    readonly holdId: string
    readonly liftedAt: Date
  }

export type CustomerNoticeTag = CustomerNotice["_tag"]

/**
 * The customer's e-mail for one event. Sending a notice that was already sent does nothing (a cron running twice, a
 * workflow step retried); a mail server that is down is retried by the implementation, never by the caller, and
 * never fails the caller's business (the event happened whether or not it was told).
 */
export class Notices extends Context.Service<Notices, {
  send(notice: CustomerNotice): Effect.Effect<void>
}>()("zh/domain/notices/Notices") {}
