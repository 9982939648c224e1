// Specification of the customer e-mails: every notice in French and English, plain text and HTML, amounts and dates
// as each language writes them (Paris time), user-typed text escaped in the HTML, and nothing a customer must not read.
import { assert, describe, it } from "@effect/vitest"
import type { Language } from "../../../domain/account/User.ts"
import type { CustomerNotice, CustomerNoticeTag } from "../../../domain/notices/CustomerNotice.ts"
import { formatEuros, formatMoment } from "../../../domain/notices/mailLayout.ts"
import { type NoticeReader, renderNotice } from "../../../domain/notices/templates.ts"

const userId = "00000000-0000-4000-8000-000000000001"
const vps = { subscriptionId: "sub-1", kind: "vps", planName: "VPS S" }
const game = { subscriptionId: "sub-2", kind: "game", planName: "Minecraft 4 GB" }
// 23:30 UTC on 1 March is 00:30 on 2 March in Paris (UTC+1).
const late = new Date("2026-03-01T23:30:00Z")
const day = 86_400_000

const notices: Record<CustomerNoticeTag, CustomerNotice> = {
  OrderPaid: { _tag: "OrderPaid", userId, orderId: "ord-1", planName: "VPS S", amountCents: 999, paidAt: late, invoiceId: null },
  OrderRetryOffered: {
    _tag: "OrderRetryOffered",
    userId,
    orderId: "ord-2",
    failedOrderId: "ord-1",
    planName: "VPS S",
    amountCents: 1199,
    payBy: late
  },
  ServiceReady: { _tag: "ServiceReady", userId, service: game, address: "play.zh.test:25565" },
  RenewalReminder: {
    _tag: "RenewalReminder",
    userId,
    service: vps,
    chargeAt: late,
    amountCents: 123_456,
    card: { brand: "Visa", last4: "4242" }
  },
  RenewalPaid: {
    _tag: "RenewalPaid",
    userId,
    service: vps,
    periodStart: late,
    paidUntil: new Date(late.getTime() + 31 * day),
    amountCents: 999,
    invoiceId: null
  },
  PaymentFailed: {
    _tag: "PaymentFailed",
    userId,
    service: vps,
    periodStart: late,
    attempt: 1,
    amountCents: 999,
    reason: "insufficient_funds",
    nextAttemptAt: new Date(late.getTime() + day),
    suspendsAt: new Date(late.getTime() + 5 * day),
    endsAt: new Date(late.getTime() + 12 * day),
    payUrl: "https://pay.zh.test/c/abc?x=1&y=2"
  },
  AuthenticationNeeded: {
    _tag: "AuthenticationNeeded",
    userId,
    service: vps,
    periodStart: late,
    amountCents: 999,
    payUrl: "https://pay.zh.test/c/def"
  },
  ServiceSuspended: { _tag: "ServiceSuspended", userId, service: vps, periodEnd: late, endsAt: new Date(late.getTime() + 7 * day) },
  FinalWarning: { _tag: "FinalWarning", userId, service: game, endsAt: late },
  ServiceEnded: { _tag: "ServiceEnded", userId, service: vps, endedAt: late },
  CancellationConfirmed: { _tag: "CancellationConfirmed", userId, service: game, endsAt: late },
  ExpressStartConfirmed: {
    _tag: "ExpressStartConfirmed",
    userId,
    orderId: "ord-1",
    planName: "VPS S",
    requestedAt: new Date(late.getTime() - 60_000),
    paidAt: late
  },
  WithdrawalAcknowledged: {
    _tag: "WithdrawalAcknowledged",
    userId,
    service: vps,
    customerName: "Ann Martin",
    concludedAt: late,
    declaredAt: new Date(late.getTime() + 3 * day),
    paidCents: 3000,
    refundCents: 2700
  },
  RefundIssued: { _tag: "RefundIssued", userId, refundId: "re_1", amountCents: 999, reason: "order_failed", creditNoteId: null },
  ServiceHeld: {
    _tag: "ServiceHeld",
    userId,
    service: vps,
    holdId: "hold-1",
    placedAt: late,
    facts: "Outgoing spam <b>reported</b> by three providers on 1 March.",
    ground: "abuse"
  },
  HoldLifted: { _tag: "HoldLifted", userId, service: game, holdId: "hold-2", liftedAt: late }
}

const reader = (language: Language, overrides: Partial<NoticeReader> = {}): NoticeReader => ({
  firstName: "Ann",
  companyName: null,
  language,
  ...overrides
})

const render = (tag: CustomerNoticeTag, language: Language, overrides: Partial<NoticeReader> = {}) =>
  renderNotice(notices[tag], reader(language, overrides), "https://panel.zh.test/")

/** What each notice's subject says, in each language. */
const subjects: Record<CustomerNoticeTag, Record<Language, string>> = {
  OrderPaid: { fr: "Reçu de paiement : VPS S", en: "Payment receipt: VPS S" },
  OrderRetryOffered: { fr: "Votre commande VPS S peut maintenant être finalisée", en: "Your VPS S order can now be completed" },
  ServiceReady: { fr: "Votre service Minecraft 4 GB est prêt", en: "Your Minecraft 4 GB is ready" },
  RenewalReminder: { fr: "Renouvellement de VPS S le 2 mars 2026", en: "VPS S renews on 2 March 2026" },
  RenewalPaid: { fr: "Reçu de renouvellement : VPS S", en: "Renewal receipt: VPS S" },
  PaymentFailed: { fr: "Échec du paiement de VPS S", en: "Payment failed for VPS S" },
  AuthenticationNeeded: { fr: "Confirmez le paiement de VPS S", en: "Confirm the payment for VPS S" },
  ServiceSuspended: { fr: "Votre service VPS S est suspendu", en: "Your VPS S is suspended" },
  FinalWarning: {
    fr: "Dernier avis : Minecraft 4 GB sera supprimé le 2 mars 2026",
    en: "Final notice: Minecraft 4 GB will be deleted on 2 March 2026"
  },
  ServiceEnded: { fr: "Votre service VPS S a été détruit", en: "Your VPS S has been destroyed" },
  CancellationConfirmed: { fr: "Résiliation confirmée : Minecraft 4 GB", en: "Cancellation confirmed: Minecraft 4 GB" },
  ExpressStartConfirmed: {
    fr: "Votre commande VPS S et votre demande d'exécution immédiate",
    en: "Your VPS S order and your request to start now"
  },
  WithdrawalAcknowledged: {
    fr: "Accusé de réception de votre rétractation : VPS S",
    en: "Acknowledgement of your withdrawal: VPS S"
  },
  RefundIssued: { fr: "Remboursement de 9,99\u00a0€", en: "Refund of €9.99" },
  ServiceHeld: { fr: "Votre service VPS S est suspendu par nos équipes", en: "Your VPS S has been suspended by our staff" },
  HoldLifted: { fr: "La suspension de Minecraft 4 GB est levée", en: "The suspension of Minecraft 4 GB is lifted" }
}

const tags = Object.keys(notices) as ReadonlyArray<CustomerNoticeTag>

describe("the customer e-mails", () => {
  for (const tag of tags) {
    for (const language of ["fr", "en"] as const) {
      it(`${tag} in ${language}: its subject, a greeting and a signature, as text and as HTML`, () => {
        const mail = render(tag, language)
        assert.strictEqual(mail.subject, subjects[tag][language])
        const greeting = language === "fr" ? "Bonjour Ann," : "Hello Ann,"
        const signature = language === "fr" ? "L'équipe ZH" : "The ZH team"
        assert.match(mail.text, new RegExp(`^${greeting}\n`))
        assert.isTrue(mail.text.endsWith(`\n${signature}`))
        assert.include(mail.html, `<html lang="${language}">`)
        assert.include(mail.html, `<p>${greeting}</p>`)
        assert.include(mail.html, `<p>${signature.replace("'", "&#39;")}</p>`)
        for (const part of [mail.subject, mail.text, mail.html]) assert.notMatch(part, /undefined|NaN|\[object|null/)
        // Every notice says something of its own beyond the greeting and signature.
        assert.isAbove(mail.text.split("\n").length, 4)
      })
    }
  }

  it("an operator's suspension is a statement of reasons: decision, facts, ground, no automated means, redress (DSA art. 17)", () => {
    const en = render("ServiceHeld", "en")
    assert.include(en.text, "Decision: we suspended your VPS S on 2 March 2026 at 00:30 (Paris time).")
    assert.include(en.text, "Facts and circumstances: Outgoing spam <b>reported</b> by three providers on 1 March.")
    assert.include(en.text, "Ground: abusive use of the service")
    assert.include(en.text, "no automated means")
    assert.include(en.text, "out-of-court dispute settlement body")
    assert.include(en.text, "competent court")
    // The operator's words are text, never markup.
    assert.include(en.html, "Outgoing spam &lt;b&gt;reported&lt;/b&gt;")
    const fr = render("ServiceHeld", "fr")
    assert.include(fr.text, "Motif : usage abusif du service")
    assert.include(fr.text, "règlement extrajudiciaire des litiges")
    assert.include(fr.text, "aucun moyen automatisé")
  })

  it("amounts are in euros as each language writes them, from integer cents", () => {
    assert.strictEqual(formatEuros(999, "fr"), "9,99\u00a0€")
    assert.strictEqual(formatEuros(999, "en"), "€9.99")
    assert.strictEqual(formatEuros(123_456, "fr"), "1\u202f234,56\u00a0€")
    assert.strictEqual(formatEuros(123_456, "en"), "€1,234.56")
    assert.strictEqual(formatEuros(5, "en"), "€0.05")
    assert.include(render("RenewalReminder", "fr").text, "Montant : 1\u202f234,56\u00a0€")
    assert.include(render("RenewalReminder", "en").text, "Amount: €1,234.56")
  })

  it("dates are Paris time, in each language's words", () => {
    assert.strictEqual(formatMoment(late, "fr"), "2 mars 2026 à 00:30 (heure de Paris)")
    assert.strictEqual(formatMoment(late, "en"), "2 March 2026 at 00:30 (Paris time)")
    // Summer time: UTC+2.
    assert.strictEqual(formatMoment(new Date("2026-07-14T10:00:00Z"), "fr"), "14 juillet 2026 à 12:00 (heure de Paris)")
  })

  it("a renewal reminder names the amount, the date and the card", () => {
    const mail = render("RenewalReminder", "en")
    assert.include(mail.text, "Date: 2 March 2026 at 00:30 (Paris time)")
    assert.include(mail.text, "Card: Visa •••• 4242")
    const noCard = renderNotice({ ...notices.RenewalReminder, card: null } as CustomerNotice, reader("fr"), "https://panel.zh.test")
    assert.include(noCard.text, "Carte : aucune carte enregistrée")
  })

  it("a failed payment says when it is tried again, when the service stops, and links to the payment page", () => {
    const mail = render("PaymentFailed", "fr")
    assert.include(mail.text, "Nous réessaierons le 3 mars 2026 à 00:30 (heure de Paris).")
    assert.include(mail.text, "suspendu le 7 mars 2026 à 00:30 (heure de Paris), puis détruit avec ses disques le 14 mars 2026")
    assert.include(mail.text, "Motif : fonds insuffisants")
    assert.include(mail.text, "Payer maintenant : https://pay.zh.test/c/abc?x=1&y=2")
    assert.include(mail.html, `<a href="https://pay.zh.test/c/abc?x=1&amp;y=2">Payer maintenant</a>`)
  })

  it("a decline reason reads in the customer's words, whether the gateway spells it with underscores or spaces", () => {
    for (const reason of ["insufficient_funds", "insufficient funds", "Insufficient Funds"]) {
      const failed = { ...notices.PaymentFailed, reason } as CustomerNotice
      assert.include(renderNotice(failed, reader("fr"), "https://panel.zh.test").text, "Motif : fonds insuffisants")
      assert.include(renderNotice(failed, reader("en"), "https://panel.zh.test").text, "Reason: insufficient funds")
    }
    const unknown = renderNotice({ ...notices.PaymentFailed, reason: "do not honor" } as CustomerNotice, reader("fr"), "https://panel.zh.test")
    assert.include(unknown.text, "Motif : do not honor")
  })

  it("a suspension says when the service will be destroyed or deleted", () => {
    assert.include(render("ServiceSuspended", "en").text, "Unless paid, it will be destroyed with its disks on 9 March 2026 at 00:30")
  })

  it("a ready service gives its address and never a password", () => {
    const mail = render("ServiceReady", "en")
    assert.include(mail.text, "Address: play.zh.test:25565")
    assert.include(mail.html, "<b>play.zh.test:25565</b>")
    assert.include(mail.text, "our e-mails never contain a password")
  })

  it("links point at the panel's public address", () => {
    assert.include(render("OrderPaid", "en").text, "Follow your order: https://panel.zh.test/orders/ord-1")
    assert.include(render("ServiceSuspended", "fr").html, `<a href="https://panel.zh.test/">`)
  })

  it("a link's label in a French text takes the space French puts before a colon, as the facts do", () => {
    assert.include(render("ServiceReady", "fr").text, "Ouvrir votre espace client : https://panel.zh.test/")
    assert.notInclude(render("ServiceReady", "fr").text, "client: https")
  })

  it("escapes what a user typed (first name, company name) in the HTML, and keeps it as typed in the text", () => {
    const hostile = { firstName: `<img src=x onerror="a()">`, companyName: `ACME <script>alert('x')</script> & co` }
    for (const tag of tags) {
      const mail = render(tag, "en", hostile)
      assert.notInclude(mail.html, "<script>")
      assert.notInclude(mail.html, "<img")
      assert.include(mail.html, "Business account: ACME &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co")
      assert.include(mail.text, `Hello <img src=x onerror="a()">,`)
    }
  })

  it("escapes text a notice carries (a plan's name, a reason) in the HTML", () => {
    const mail = renderNotice(
      { ...notices.RefundIssued, reason: `<b>bold</b>` } as CustomerNotice,
      reader("en"),
      "https://panel.zh.test"
    )
    assert.include(mail.html, "&lt;b&gt;bold&lt;/b&gt;")
    assert.notInclude(mail.html, "<b>bold</b>")
  })
})

describe("the consumer's rights in e-mails", () => {
  it("the withdrawal's acknowledgement says what was declared, by whom, the date and the time (Paris), and the refund", () => {
    const fr = render("WithdrawalAcknowledged", "fr")
    assert.include(fr.text, "Je soussigné(e) Ann Martin renonce au contrat VPS S (abonnement sub-1) conclu le 2 mars 2026 à 00:30 (heure de Paris)")
    assert.include(fr.text, "déclarée le 5 mars 2026 à 00:30 (heure de Paris)")
    assert.include(fr.text, "27,00\u00a0€")
    const en = render("WithdrawalAcknowledged", "en")
    assert.include(en.text, "I, Ann Martin, withdraw from the VPS S contract (subscription sub-1) concluded on 2 March 2026 at 00:30 (Paris time)")
    assert.include(en.text, "declared on 5 March 2026 at 00:30 (Paris time)")
    assert.include(en.text, "€27.00")
    assert.include(en.html, "Ann Martin")
  })

  it("the express request's confirmation says the withdrawal right remains and a withdrawal is refunded pro rata", () => {
    assert.include(render("ExpressStartConfirmed", "fr").text, "Vous conservez votre droit de rétractation")
    assert.include(render("ExpressStartConfirmed", "fr").text, "au prorata du temps écoulé")
    assert.include(render("ExpressStartConfirmed", "en").text, "You keep your right to withdraw")
    assert.include(render("ExpressStartConfirmed", "en").text, "in proportion to the time elapsed")
  })
})
