// The customer e-mails through a real SMTP server, on the test clock. A VPS's whole life: ready (its address),
// suspended (the mail server refusing it first: retried later, received once), the final warning two days before
// the end and the end, each received once however often the sweep and the retry pass run, in the language the
// customer has when each is sent. Two instances on one database sending the same events at once, then retrying
// them at once: each e-mail received once. And an event told inside a transaction: sent after its commit, never when
// it rolls back.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as FacturXDocuments from "../../adapters/documents/FacturXDocuments.ts"
import * as PgInvoices from "../../adapters/postgres/PgInvoices.ts"
import * as PgUnitOfWork from "../../adapters/postgres/PgUnitOfWork.ts"
import * as PgUsers from "../../adapters/postgres/PgUsers.ts"
import { UserId } from "../../domain/account/User.ts"
import { placePaidOrder } from "../support/simulatedStripe.ts"
import { addMonth } from "../../domain/billing/Billing.ts"
import { quotePlanMonth, recordCharge, recordRefund } from "../../domain/billing/invoicing/issueDocuments.ts"
import { billedCustomer } from "../support/invoicing.ts"
import { chargeEntry } from "../support/invoiceMother.ts"
import { sweepLifecycle } from "../../domain/billing/sweepLifecycle.ts"
import { retryDueNotices } from "../../domain/notices/deliverNotices.ts"
import { type CustomerNotice, Notices } from "../../domain/notices/CustomerNotice.ts"
import { NoticeSettings } from "../../domain/notices/NoticeSettings.ts"
import { InvoiceDocuments } from "../../ports/InvoiceDocuments.ts"
import { Invoices } from "../../ports/Invoices.ts"
import { Mailer } from "../../ports/Mailer.ts"
import { NoticeRecords } from "../../ports/NoticeRecords.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { testDatabase } from "../support/testServer.ts"
import { mailCount as mailCountOf, noticesThrough, pause, until } from "../support/smtpNotices.ts"
import { attachmentsOf, decodeQuotedPrintable, headerOf, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { embeddedFiles } from "../support/pdfFiles.ts"
import { newUser } from "../support/userMother.ts"
import type { SqlClient } from "effect/sql"
import { vpsEnvWith, vpsOptions, vpsSettings } from "../support/vpsEnv.ts"

let sink: SmtpSink
beforeAll(async () => {
  sink = await startSmtpSink()
})
afterAll(() => sink?.close())

const alice = newUser("alice.notices@example.com", {
  id: UserId.make("00000000-0000-4000-8000-00000000a11c"),
  firstName: "Alice",
  language: "fr"
})

const env = () => vpsEnvWith(noticesThrough(sink, testDatabase()))

/** The issued documents on `database` and their renderer, which a receipt's attachment is made from. */
const documentsOn = <E>(database: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.mergeAll(PgInvoices.layer.pipe(Layer.provide(database)), FacturXDocuments.layer)

/** `pdf` opens as a PDF, carries `number` and the factur-x.xml of that document. */
const expectFacturX = (pdf: Uint8Array, number: string) =>
  Effect.promise(async () => {
    assert.strictEqual(new TextDecoder().decode(pdf.slice(0, 5)), "%PDF-")
    const { doc, files } = await embeddedFiles(pdf)
    assert.strictEqual(doc.getPageCount(), 1)
    assert.include(files.get("factur-x.xml") ?? "", `<ram:ID>${number}</ram:ID>`)
  })

const received = Effect.sync(() => sink.received.map((raw) => ({ raw, subject: headerOf(raw, "Subject") ?? "" })))
const mailCount = (n: number) => mailCountOf(sink, n)

describe("the e-mails of a VPS's life, through SMTP", () => {
  it.effect("ready, suspended, final warning, destroyed: each received once, in the customer's language", () =>
    Effect.gen(function*() {
      const users = yield* Users
      yield* users.insert(alice)

      const order = yield* placePaidOrder(alice.id, "vps-s", vpsOptions("mail-1"))
      const orders = yield* Orders
      yield* until(Effect.map(orders.get(order.id), (o) => Option.getOrThrow(o).status === "completed"), "the order")
      const done = Option.getOrThrow(yield* orders.get(order.id))
      const vps = Option.getOrThrow(yield* (yield* VpsRecords).get(done.serviceId!))
      // The payment's receipt and the service ready.
      yield* mailCount(2)
      // The receipt carries the payment's invoice: its Factur-X PDF, named by its number, rendered from the issued one.
      const [invoice] = yield* (yield* Invoices).forUser(alice.id, null, 10)
      // (The receipt is recorded before the provisioning starts; rendering its PDF may let "ready" reach the inbox first.)
      const first = yield* received
      const receiptMail = first.find((m) => m.subject.startsWith("Reçu de paiement"))!
      const receiptFiles = attachmentsOf(receiptMail.raw)
      assert.deepStrictEqual(receiptFiles.map((f) => [f.filename, f.contentType]), [[`${invoice!.number}.pdf`, "application/pdf"]])
      yield* expectFacturX(receiptFiles[0]!.content, invoice!.number)
      assert.deepStrictEqual(attachmentsOf(first.find((m) => m !== receiptMail)!.raw), [], "the service ready carries nothing")

      // The period lapses while the mail server refuses everything: the suspension is retried, after its pause.
      const periodEnd = Option.getOrThrow(yield* (yield* Subscriptions).get(done.subscriptionId!)).currentPeriodEnd
      const graceEnd = periodEnd.getTime() + Duration.toMillis(vpsSettings.gracePeriod)
      yield* TestClock.setTime(periodEnd.getTime() + 60_000)
      sink.refusing = true
      yield* sweepLifecycle
      yield* until(Effect.sync(() => sink.refused >= 1), "the refusal")
      sink.refusing = false
      yield* pause(200)
      yield* sweepLifecycle
      yield* retryDueNotices
      yield* pause(200)
      assert.strictEqual((yield* received).length, 2, "not again before the pause after the failure")
      yield* TestClock.adjust("1 minute")
      yield* retryDueNotices
      yield* mailCount(3)
      yield* retryDueNotices
      yield* sweepLifecycle

      // The customer switches to English: the next e-mails are in English.
      yield* users.setLanguage(alice.id, "en")
      yield* TestClock.setTime(graceEnd - Duration.toMillis(Duration.days(2)) + 1_000)
      yield* sweepLifecycle
      yield* mailCount(4)
      yield* TestClock.adjust("1 minute")
      yield* sweepLifecycle

      yield* TestClock.setTime(graceEnd)
      yield* sweepLifecycle
      yield* mailCount(5)
      yield* TestClock.adjust("1 minute")
      yield* sweepLifecycle
      yield* TestClock.adjust("1 hour")
      yield* retryDueNotices
      yield* pause(300)

      // The receipt and "ready" in the order they were told (the inbox may have them the other way round).
      const arrived = yield* received
      const [one, two] = [arrived[0]!, arrived[1]!]
      const mails = [...(one.subject.startsWith("Reçu de paiement") ? [one, two] : [two, one]), ...arrived.slice(2)]
      const day = (ms: number, locale: string) =>
        new Intl.DateTimeFormat(locale, { timeZone: "Europe/Paris", dateStyle: "long" }).format(new Date(ms))
      assert.deepStrictEqual(mails.map((m) => m.subject), [
        "Reçu de paiement : VPS S",
        "Votre service VPS S est prêt",
        "Votre service VPS S est suspendu",
        `Final notice: VPS S will be destroyed on ${day(graceEnd, "en-GB")}`,
        "Your VPS S has been destroyed"
      ])
      for (const mail of mails) assert.strictEqual(headerOf(mail.raw, "To"), alice.email)
      // Quoted-printable decodes to the UTF-8 bytes of the text.
      const [receipt, ready, suspended, warning] = mails.map((m) => Buffer.from(decodeQuotedPrintable(m.raw), "latin1").toString("utf8"))
      assert.include(receipt, "VPS S")
      assert.include(ready, `Adresse : ${vps.address}`)
      assert.include(ready, "Bonjour Alice,")
      assert.include(suspended, `le ${day(graceEnd, "fr-FR")}`)
      assert.include(warning, "Hello Alice,")
      assert.include(warning, "text/html")
    }).pipe(Effect.provide(env())), { timeout: 60_000 })

  it.effect("a renewal's receipt carries its invoice and a refund's e-mail its credit note, as Factur-X PDFs", () =>
    Effect.gen(function*() {
      const dan = newUser("dan.notices@example.com", { firstName: "Dan", language: "en" })
      yield* (yield* Users).insert(dan)
      const user = yield* billedCustomer(dan.id)
      const start = new Date(yield* Clock.currentTimeMillis)
      const quote = yield* quotePlanMonth(user, { name: "VPS S", priceCents: 500 }, { start, end: addMonth(start) })
      const charge = chargeEntry(dan.id, { amountCents: quote.amounts.totalIncludingVatCents, createdAt: start })
      const unitOfWork = yield* UnitOfWork
      const invoice = Option.getOrThrow(yield* unitOfWork.transaction(recordCharge(charge, quote)))
      const refund = chargeEntry(dan.id, { kind: "refund", amountCents: charge.amountCents, reference: `${charge.reference}:re_dan`, createdAt: start })
      const credit = Option.getOrThrow(yield* unitOfWork.transaction(recordRefund(refund, charge.reference)))
      const before = sink.received.length
      const notices = yield* Notices
      const service = { subscriptionId: "sub-dan", kind: "vps", planName: "VPS S" }
      yield* notices.send({ _tag: "RenewalPaid", userId: dan.id, service, periodStart: start, paidUntil: addMonth(start), amountCents: 600, invoiceId: invoice.id })
      yield* notices.send({ _tag: "RefundIssued", userId: dan.id, refundId: "re_dan", amountCents: 600, reason: "order_failed", creditNoteId: credit.id })
      yield* mailCount(before + 2)
      const mails = (yield* received).slice(before)
      for (const [subject, document] of [["Renewal receipt: VPS S", invoice], ["Refund of €6.00", credit]] as const) {
        const mail = mails.find((m) => m.subject === subject)
        assert.isDefined(mail, subject)
        const files = attachmentsOf(mail!.raw)
        assert.deepStrictEqual(files.map((f) => [f.filename, f.contentType]), [[`${document.number}.pdf`, "application/pdf"]])
        yield* expectFacturX(files[0]!.content, document.number)
      }
      assert.match(credit.number, /^A\d{4}-\d{6}$/)
    }).pipe(Effect.provide(env())), { timeout: 60_000 })

  /** An instance of the application, as far as notices go: its Notices and its retry pass. */
  interface Instance {
    readonly send: (notice: CustomerNotice) => Effect.Effect<void>
    readonly retry: Effect.Effect<void>
  }
  class First extends Context.Service<First, Instance>()("test/First") {}
  class Second extends Context.Service<Second, Instance>()("test/Second") {}

  /** Two instances, each with its own Notices, store and mail connection, on one database (the same layer: shared). */
  const twoInstances = () => {
    const database = testDatabase()
    const instance = <I>(tag: Context.Key<I, Instance>) =>
      Layer.effect(tag, Effect.gen(function*() {
        const notices = yield* Notices
        const context = yield* Effect.context<NoticeRecords | NoticeSettings | Users | Mailer | Invoices | InvoiceDocuments>()
        return { send: notices.send, retry: Effect.provideContext(Effect.orDie(retryDueNotices), context) }
      })).pipe(Layer.provide(noticesThrough(sink, database)))
    return Layer.mergeAll(instance(First), instance(Second), PgUsers.layer.pipe(Layer.provide(database))).pipe(
      Layer.provide(documentsOn(database))
    )
  }

  it.effect("two instances telling the same events at once, then retrying them at once: each received once", () =>
    Effect.gen(function*() {
      const bob = newUser("bob.notices@example.com", { firstName: "Bob", language: "en" })
      yield* (yield* Users).insert(bob)
      const [first, second] = [yield* First, yield* Second]
      const before = sink.received.length
      const events: ReadonlyArray<CustomerNotice> = Array.from({ length: 10 }, (_, i) => ({
        _tag: "RefundIssued",
        userId: bob.id,
        refundId: `re_race_${i}`,
        amountCents: 100 + i,
        reason: "order_failed",
        creditNoteId: null
      }))
      // The mail server refuses the first attempts: every event is left for the retry passes.
      sink.refusing = true
      const refusedBefore = sink.refused
      yield* Effect.all(
        [...events, ...events, ...events].flatMap((event) => [first.send(event), second.send(event)]),
        { concurrency: "unbounded", discard: true }
      )
      yield* until(Effect.sync(() => sink.refused - refusedBefore >= events.length), "the refusals")
      yield* pause(300)
      assert.strictEqual(sink.refused - refusedBefore, events.length, "one first attempt per event, whoever told it")
      sink.refusing = false
      yield* TestClock.adjust("1 minute")
      yield* Effect.all([first.retry, second.retry, first.retry, second.retry], { concurrency: "unbounded", discard: true })
      yield* until(Effect.sync(() => sink.received.length - before >= events.length), "the retried e-mails")
      yield* TestClock.adjust("1 hour")
      yield* Effect.all([first.retry, second.retry], { concurrency: "unbounded", discard: true })
      yield* pause(300)
      const subjects = sink.received.slice(before).map((raw) => headerOf(raw, "Subject"))
      assert.deepStrictEqual(subjects.sort(), events.map((_, i) => `Refund of €1.0${i}`).sort())
    }).pipe(Effect.provide(twoInstances())), { timeout: 60_000 })

  it.effect("an event told inside a transaction is e-mailed after the commit, and never when it rolls back", () =>
    Effect.gen(function*() {
      const carol = newUser("carol.notices@example.com", { firstName: "Carol", language: "en" })
      yield* (yield* Users).insert(carol)
      const [unitOfWork, notices] = [yield* UnitOfWork, yield* Notices]
      const refund = (refundId: string, amountCents: number): CustomerNotice => ({
        _tag: "RefundIssued",
        userId: carol.id,
        refundId,
        amountCents,
        reason: "order_failed",
        creditNoteId: null
      })
      const before = sink.received.length
      const rolledBack = yield* unitOfWork.transaction(
        Effect.andThen(notices.send(refund("re_tx_rolled_back", 300)), Effect.fail("the business failed" as const))
      ).pipe(Effect.flip)
      assert.strictEqual(rolledBack, "the business failed")
      yield* unitOfWork.transaction(Effect.gen(function*() {
        yield* notices.send(refund("re_tx_committed", 200))
        yield* pause(300)
        assert.strictEqual(sink.received.length, before, "nothing is sent before the commit")
      }))
      yield* until(Effect.sync(() => sink.received.length > before), "the committed event's e-mail")
      yield* TestClock.adjust("1 hour")
      yield* retryDueNotices
      yield* pause(300)
      assert.deepStrictEqual(sink.received.slice(before).map((raw) => headerOf(raw, "Subject")), ["Refund of €2.00"])
    }).pipe(Effect.provide((() => {
      const database = testDatabase()
      return Layer.mergeAll(noticesThrough(sink, database), PgUnitOfWork.layer.pipe(Layer.provide(database))).pipe(
        Layer.provideMerge(documentsOn(database))
      )
    })())), { timeout: 60_000 })
})
