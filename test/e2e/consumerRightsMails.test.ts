// The consumer's rights by e-mail, through a real SMTP server, on the test clock (issue 13 §3): a consumer orders a VPS
// with the express request to start now and gets its confirmation with the receipt; withdrawing on day 3 of a 30-day
// month, they get the acknowledgement (what was declared, the date and the time in Paris) and the refund of 27/30 of
// the price; the VPS is destroyed through its product and its end told.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { UserId } from "../../domain/account/User.ts"
import { orderAsCustomer, withdrawFromContract } from "../../domain/billing/withdrawal.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { Users } from "../../ports/Users.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { billedCustomer } from "../support/invoicing.ts"
import { payOrder } from "../support/simulatedStripe.ts"
import { decodeQuotedPrintable, headerOf, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { testDatabase } from "../support/testServer.ts"
import { mailCount as mailCountOf, noticesThrough, pause, until } from "../support/smtpNotices.ts"
import { newUser } from "../support/userMother.ts"
import { vpsEnvWith, vpsOptions } from "../support/vpsEnv.ts"

let sink: SmtpSink
beforeAll(async () => {
  sink = await startSmtpSink()
})
afterAll(() => sink?.close())

const claire = newUser("claire.withdraws@example.com", {
  id: UserId.make("00000000-0000-4000-8000-0000000c1a1e"),
  firstName: "Claire",
  lastName: "Dupont",
  language: "fr"
})

const received = Effect.sync(() =>
  sink.received.map((raw) => ({
    subject: headerOf(raw, "Subject") ?? "",
    to: headerOf(raw, "To") ?? "",
    body: Buffer.from(decodeQuotedPrintable(raw), "latin1").toString("utf8")
  }))
)
const mailCount = (n: number) => mailCountOf(sink, n)

/**
 * Monday 1 June 1970, 10:00 in Paris (no summer time then): June has 30 days. Near the test clock's start: setting it
 * far ahead would run every hourly sweep of the simulated Stripe on the way.
 */
const orderedAt = Date.parse("1970-06-01T09:00:00Z")

describe("a consumer's rights, by e-mail through SMTP", () => {
  it.effect("the express request confirmed when paid; the withdrawal on day 3 acknowledged, refunded 27/30, the VPS destroyed", () =>
    Effect.gen(function*() {
      yield* (yield* Users).insert(claire)
      yield* TestClock.setTime(orderedAt)
      const placed = yield* orderAsCustomer(yield* billedCustomer(claire.id), "vps-s", vpsOptions("withdraw-1"), true)
      yield* payOrder(placed.id)
      const orders = yield* Orders
      yield* until(Effect.map(orders.get(placed.id), (o) => Option.getOrThrow(o).status === "completed"), "the order")
      const order = Option.getOrThrow(yield* orders.get(placed.id))
      // The receipt, the express request's confirmation, the service ready.
      yield* mailCount(3)
      const [charge] = (yield* (yield* Ledger).forOrder(order.id)).filter((e) => e.kind === "charge")
      const paid = charge?.amountCents ?? 0
      assert.isAbove(paid, 0)

      yield* TestClock.adjust("3 days")
      const withdrawn = yield* withdrawFromContract(
        { id: claire.id, accountType: "personal", firstName: "Claire", lastName: "Dupont" },
        order.subscriptionId ?? ""
      )
      assert.strictEqual(withdrawn.refundCents, paid - Math.floor(paid * 3 / 30))
      const vps = Option.getOrThrow(yield* (yield* VpsRecords).get(order.serviceId ?? ""))
      yield* until(
        Effect.map((yield* VpsRecords).get(vps.id), (v) => Option.isSome(v) && v.value.status === "destroyed"),
        "the VPS destroyed"
      )
      // The acknowledgement, the refund, the end.
      yield* mailCount(6)
      yield* pause(300)

      const mails = yield* received
      assert.sameMembers(mails.map((m) => m.subject), [
        "Reçu de paiement : VPS S",
        "Votre commande VPS S et votre demande d'exécution immédiate",
        "Votre service VPS S est prêt",
        "Accusé de réception de votre rétractation : VPS S",
        `Remboursement de ${new Intl.NumberFormat("fr-FR", { style: "currency", currency: "EUR" }).format(withdrawn.refundCents / 100)}`,
        "Votre service VPS S a été détruit"
      ])
      for (const mail of mails) assert.strictEqual(mail.to, claire.email)
      const body = (subject: string) => mails.find((m) => m.subject.startsWith(subject))?.body ?? ""
      const express = body("Votre commande VPS S")
      assert.include(express, "Vous conservez votre droit de rétractation")
      assert.include(express, "1 juin 1970 à 10:00 (heure de Paris)")
      const ack = body("Accusé de réception")
      assert.include(ack, "Je soussigné(e) Claire Dupont renonce au contrat VPS S")
      assert.include(ack, order.subscriptionId ?? "")
      assert.include(ack, "conclu le 1 juin 1970 à 10:00 (heure de Paris)")
      assert.include(ack, "déclarée le 4 juin 1970 à 10:00 (heure de Paris)")
      assert.include(ack, new Intl.NumberFormat("fr-FR", { style: "currency", currency: "EUR" }).format(withdrawn.refundCents / 100))
      assert.include(body("Remboursement"), "rétractation (renonciation au contrat)")
    }).pipe(Effect.provide(vpsEnvWith(noticesThrough(sink, testDatabase())))), { timeout: 120_000 })
})
