// Every customer notice as an e-mail, in French and in English: subject, plain text and HTML, in the shared layout.
// A notice carries only what the customer may read (an address, never a password or an upstream's own address).
import type { Language } from "../account/User.ts"
import type { CustomerNotice, NoticeCard, NoticeService } from "./CustomerNotice.ts"
import { formatDay, formatEuros, formatMoment, layoutMail, type MailParts } from "./mailLayout.ts"

/** Who reads the notice, as read when it is sent. */
export interface NoticeReader {
  readonly firstName: string
  readonly companyName: string | null
  readonly language: Language
}

export interface RenderedNotice {
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** What a decline or refund reason code means to a customer; any other reason is shown as it came. */
const reasons: Record<Language, Record<string, string>> = {
  fr: {
    card_declined: "la carte a été refusée",
    generic_decline: "la carte a été refusée",
    insufficient_funds: "fonds insuffisants",
    expired_card: "la carte a expiré",
    incorrect_cvc: "le cryptogramme est incorrect",
    processing_error: "erreur de traitement de la banque",
    authentication_required: "votre banque demande une confirmation",
    no_saved_card: "aucune carte enregistrée",
    order_failed: "votre commande n'a pas pu être livrée",
    requested_by_customer: "à votre demande",
    withdrawal: "rétractation (renonciation au contrat)",
    duplicate: "paiement en double",
    goodwill: "geste commercial",
    service_problem: "un problème de service de notre part"
  },
  en: {
    card_declined: "the card was declined",
    generic_decline: "the card was declined",
    insufficient_funds: "insufficient funds",
    expired_card: "the card has expired",
    incorrect_cvc: "the security code is incorrect",
    processing_error: "the bank could not process it",
    authentication_required: "your bank asks for a confirmation",
    no_saved_card: "no saved card",
    order_failed: "your order could not be delivered",
    requested_by_customer: "at your request",
    withdrawal: "withdrawal from the contract",
    duplicate: "duplicate payment",
    goodwill: "a goodwill gesture",
    service_problem: "a service problem on our side"
  }
}

/**
 * The grounds of an operator's hold (domain/billing/ServiceHold.ts) as the statement of reasons explains them: the
 * contractual or legal basis, in the reader's words (DSA art. 17(3)(d) and (e)).
 */
const grounds: Record<Language, Record<string, string>> = {
  fr: {
    terms_of_service: "manquement à nos conditions générales de service (usage du service contraire au contrat)",
    illegal_content: "contenu illicite hébergé sur le service, qui nous a été signalé ou que nous avons constaté",
    abuse: "usage abusif du service (envoi massif de messages non sollicités, attaques contre des tiers, etc.), interdit par nos conditions générales",
    security: "le service est compromis ou menace la sécurité d'autres systèmes ; nos conditions générales nous autorisent à l'isoler",
    fraud: "soupçon de fraude au paiement ou à l'identité, contraire à nos conditions générales"
  },
  en: {
    terms_of_service: "a breach of our terms of service (a use of the service the contract does not allow)",
    illegal_content: "illegal content hosted on the service, reported to us or found by us",
    abuse: "abusive use of the service (bulk unsolicited messages, attacks on third parties, etc.), forbidden by our terms of service",
    security: "the service is compromised or threatens the security of other systems; our terms of service allow us to isolate it",
    fraud: "suspected payment or identity fraud, contrary to our terms of service"
  }
}

const t = {
  fr: {
    greeting: (name: string) => `Bonjour ${name},`,
    signature: "L'équipe ZH",
    account: (company: string) => `Compte professionnel : ${company}`,
    amount: "Montant",
    date: "Date",
    order: "Commande",
    address: "Adresse",
    card: "Carte",
    period: "Période",
    reference: "Référence",
    reason: "Motif",
    noCard: "aucune carte enregistrée",
    panel: "Ouvrir votre espace client",
    pay: "Payer maintenant",
    noPassword: "Pour votre sécurité, nos e-mails ne contiennent jamais de mot de passe.",
    ended: (s: NoticeService) => s.kind === "vps" ? "détruit avec ses disques" : "supprimé avec ses fichiers",
    endedShort: (s: NoticeService) => s.kind === "vps" ? "détruit" : "supprimé",
    range: (from: string, to: string) => `du ${from} au ${to}`
  },
  en: {
    greeting: (name: string) => `Hello ${name},`,
    signature: "The ZH team",
    account: (company: string) => `Business account: ${company}`,
    amount: "Amount",
    date: "Date",
    order: "Order",
    address: "Address",
    card: "Card",
    period: "Period",
    reference: "Reference",
    reason: "Reason",
    noCard: "no saved card",
    panel: "Open your customer area",
    pay: "Pay now",
    noPassword: "For your security, our e-mails never contain a password.",
    ended: (s: NoticeService) => s.kind === "vps" ? "destroyed with its disks" : "deleted with its files",
    endedShort: (s: NoticeService) => s.kind === "vps" ? "destroyed" : "deleted",
    range: (from: string, to: string) => `${from} to ${to}`
  }
} as const

const cardOf = (card: NoticeCard | null, language: Language) =>
  card === null ? t[language].noCard : `${card.brand} •••• ${card.last4}`

/** A gateway's decline code in either spelling ("insufficient_funds", "insufficient funds"), in the reader's words. */
const reasonOf = (reason: string, language: Language) =>
  reasons[language][reason.trim().toLowerCase().replace(/[\s-]+/g, "_")] ?? reason

type Body = Omit<MailParts, "greeting" | "signature">

/** Subject and body of one notice, in one language. */
const compose = (notice: CustomerNotice, language: Language, publicUrl: string): { subject: string; body: Body } => {
  const w = t[language]
  const fr = language === "fr"
  const money = (cents: number) => formatEuros(cents, language)
  const at = (date: Date) => formatMoment(date, language)
  const day = (date: Date) => formatDay(date, language)
  const panel = { label: w.panel, url: `${publicUrl}/` }
  switch (notice._tag) {
    case "OrderPaid":
      return {
        subject: fr ? `Reçu de paiement : ${notice.planName}` : `Payment receipt: ${notice.planName}`,
        body: {
          paragraphs: [fr
            ? `Nous avons bien reçu votre paiement pour ${notice.planName}. Votre service est en préparation : nous vous écrirons dès qu'il sera prêt.`
            : `We received your payment for ${notice.planName}. Your service is being prepared: we will write to you as soon as it is ready.`],
          facts: [[w.order, notice.orderId], [w.amount, money(notice.amountCents)], [w.date, at(notice.paidAt)]],
          action: { label: fr ? "Suivre votre commande" : "Follow your order", url: `${publicUrl}/orders/${encodeURIComponent(notice.orderId)}` }
        }
      }
    case "OrderRetryOffered":
      return {
        subject: fr ? `Votre commande ${notice.planName} peut maintenant être finalisée` : `Your ${notice.planName} order can now be completed`,
        body: {
          paragraphs: [
            fr
              ? `Votre commande ${notice.failedOrderId} de ${notice.planName} n'a pas pu être livrée et vous a été remboursée. La cause est corrigée : vous pouvez maintenant la finaliser, avec les mêmes options.`
              : `Your ${notice.planName} order ${notice.failedOrderId} could not be delivered and was refunded to you. The cause is fixed: you can now complete it, with the same options.`,
            fr
              ? `Rien n'est prélevé sans vous : la nouvelle commande attend votre paiement sur sa page, avant le ${at(notice.payBy)}. Vous recevrez une facture et un reçu, comme pour toute commande.`
              : `Nothing is charged without you: the new order awaits your payment on its page, before ${at(notice.payBy)}. You will receive an invoice and a receipt, as for any order.`
          ],
          facts: [
            [w.order, notice.orderId],
            [fr ? "Commande d'origine" : "Original order", notice.failedOrderId],
            [w.amount, money(notice.amountCents)]
          ],
          action: { label: fr ? "Finaliser la commande" : "Complete the order", url: `${publicUrl}/orders/${encodeURIComponent(notice.orderId)}` }
        }
      }
    case "ServiceReady": {
      const plan = notice.service.planName
      const how = notice.service.kind === "vps"
        ? fr
          ? "Connectez-vous en SSH à l'adresse ci-dessous, avec la clé choisie à la commande, ou ouvrez sa console depuis votre espace client."
          : "Connect over SSH to the address below with the key you chose when ordering, or open its console from your customer area."
        : fr
        ? "Dans votre jeu, connectez-vous à l'adresse ci-dessous ; la console et les fichiers sont dans votre espace client."
        : "In your game, connect to the address below; the console and the files are in your customer area."
      return {
        subject: fr ? `Votre service ${plan} est prêt` : `Your ${plan} is ready`,
        body: {
          paragraphs: [fr ? `Votre service ${plan} est en ligne.` : `Your ${plan} is up and running.`, how],
          facts: [[w.address, notice.address]],
          action: panel,
          notes: [w.noPassword]
        }
      }
    }
    case "RenewalReminder": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Renouvellement de ${plan} le ${day(notice.chargeAt)}` : `${plan} renews on ${day(notice.chargeAt)}`,
        body: {
          paragraphs: [fr
            ? `Votre abonnement ${plan} sera renouvelé automatiquement le ${at(notice.chargeAt)}.`
            : `Your ${plan} subscription renews automatically on ${at(notice.chargeAt)}.`],
          facts: [[w.amount, money(notice.amountCents)], [w.date, at(notice.chargeAt)], [w.card, cardOf(notice.card, language)]],
          action: panel,
          notes: [fr
            ? "Pour changer de carte ou résilier, rendez-vous dans votre espace client avant cette date."
            : "To change your card or cancel, visit your customer area before that date."]
        }
      }
    }
    case "RenewalPaid": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Reçu de renouvellement : ${plan}` : `Renewal receipt: ${plan}`,
        body: {
          paragraphs: [fr
            ? `Le renouvellement de ${plan} est payé : votre service continue jusqu'au ${at(notice.paidUntil)}.`
            : `The renewal of ${plan} is paid: your service continues until ${at(notice.paidUntil)}.`],
          facts: [[w.amount, money(notice.amountCents)], [w.period, w.range(day(notice.periodStart), day(notice.paidUntil))]],
          action: panel
        }
      }
    }
    case "PaymentFailed": {
      const plan = notice.service.planName
      const next = notice.nextAttemptAt === null
        ? fr ? "Nous ne réessaierons plus automatiquement." : "We will not try again automatically."
        : fr
        ? `Nous réessaierons le ${at(notice.nextAttemptAt)}.`
        : `We will try again on ${at(notice.nextAttemptAt)}.`
      const stop = notice.suspendsAt === null
        ? fr
          ? `Le service est suspendu ; sans paiement, il sera ${w.ended(notice.service)} le ${at(notice.endsAt)}.`
          : `The service is suspended; unless paid, it will be ${w.ended(notice.service)} on ${at(notice.endsAt)}.`
        : fr
        ? `Sans paiement, le service sera suspendu le ${at(notice.suspendsAt)}, puis ${w.ended(notice.service)} le ${at(notice.endsAt)}.`
        : `Unless paid, the service will be suspended on ${at(notice.suspendsAt)}, then ${w.ended(notice.service)} on ${at(notice.endsAt)}.`
      return {
        subject: fr ? `Échec du paiement de ${plan}` : `Payment failed for ${plan}`,
        body: {
          paragraphs: [
            fr ? `Le paiement du renouvellement de ${plan} a échoué.` : `The renewal payment for ${plan} failed.`,
            `${next} ${stop}`
          ],
          facts: [[w.amount, money(notice.amountCents)], [w.reason, reasonOf(notice.reason, language)]],
          action: { label: w.pay, url: notice.payUrl }
        }
      }
    }
    case "AuthenticationNeeded": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Confirmez le paiement de ${plan}` : `Confirm the payment for ${plan}`,
        body: {
          paragraphs: [fr
            ? `Votre banque demande que vous confirmiez le paiement du renouvellement de ${plan}. Confirmez-le sur notre page de paiement sécurisée.`
            : `Your bank asks you to confirm the renewal payment for ${plan}. Confirm it on our secure payment page.`],
          facts: [[w.amount, money(notice.amountCents)]],
          action: { label: fr ? "Confirmer le paiement" : "Confirm the payment", url: notice.payUrl }
        }
      }
    }
    case "ServiceSuspended": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Votre service ${plan} est suspendu` : `Your ${plan} is suspended`,
        body: {
          paragraphs: [
            fr
              ? `La période payée de ${plan} s'est terminée le ${at(notice.periodEnd)} sans renouvellement : le service est suspendu.`
              : `The paid period of ${plan} ended on ${at(notice.periodEnd)} without a renewal: the service is suspended.`,
            fr
              ? `Sans paiement, il sera ${w.ended(notice.service)} le ${at(notice.endsAt)}. Payez depuis votre espace client pour le réactiver.`
              : `Unless paid, it will be ${w.ended(notice.service)} on ${at(notice.endsAt)}. Pay from your customer area to resume it.`
          ],
          action: panel
        }
      }
    }
    case "FinalWarning": {
      const plan = notice.service.planName
      return {
        subject: fr
          ? `Dernier avis : ${plan} sera ${w.endedShort(notice.service)} le ${day(notice.endsAt)}`
          : `Final notice: ${plan} will be ${w.endedShort(notice.service)} on ${day(notice.endsAt)}`,
        body: {
          paragraphs: [fr
            ? `Sans paiement, votre service ${plan} sera ${w.ended(notice.service)} le ${at(notice.endsAt)}. Ses données ne pourront pas être récupérées.`
            : `Unless paid, your ${plan} will be ${w.ended(notice.service)} on ${at(notice.endsAt)}. Its data cannot be recovered afterwards.`],
          action: panel
        }
      }
    }
    case "ServiceEnded": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Votre service ${plan} a été ${w.endedShort(notice.service)}` : `Your ${plan} has been ${w.endedShort(notice.service)}`,
        body: {
          paragraphs: [fr
            ? `Votre service ${plan} a été ${w.ended(notice.service)} le ${at(notice.endedAt)} : l'abonnement est terminé.`
            : `Your ${plan} was ${w.ended(notice.service)} on ${at(notice.endedAt)}: the subscription has ended.`],
          action: { label: fr ? "Commander un nouveau service" : "Order a new service", url: `${publicUrl}/order` }
        }
      }
    }
    case "CancellationConfirmed": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Résiliation confirmée : ${plan}` : `Cancellation confirmed: ${plan}`,
        body: {
          paragraphs: [fr
            ? `Votre résiliation de ${plan} est enregistrée : le service reste disponible jusqu'au ${at(notice.endsAt)} et ne sera plus facturé.`
            : `Your cancellation of ${plan} is recorded: the service stays available until ${at(notice.endsAt)} and will not be charged again.`],
          action: panel
        }
      }
    }
    case "ExpressStartConfirmed":
      return {
        subject: fr
          ? `Votre commande ${notice.planName} et votre demande d'exécution immédiate`
          : `Your ${notice.planName} order and your request to start now`,
        body: {
          paragraphs: [
            fr
              ? `Votre commande de ${notice.planName} est payée. Lors de la commande, vous avez expressément demandé que le service commence immédiatement, avant la fin de votre délai de rétractation de 14 jours.`
              : `Your ${notice.planName} order is paid. When ordering, you expressly asked for the service to start at once, before the end of your 14-day withdrawal period.`,
            fr
              ? "Vous conservez votre droit de rétractation pendant 14 jours à compter du paiement : utilisez le bouton « Renoncer au contrat ici » de votre espace client. Vous serez alors remboursé du prix payé, moins la part du service déjà fournie, calculée au prorata du temps écoulé."
              : "You keep your right to withdraw for 14 days from the payment: use the \"Withdraw from this contract here\" button in your customer area. You will then be refunded the price paid minus the part of the service already provided, in proportion to the time elapsed."
          ],
          facts: [[w.order, notice.orderId], [fr ? "Demande faite le" : "Requested on", at(notice.requestedAt)], [fr ? "Payée le" : "Paid on", at(notice.paidAt)]],
          action: panel
        }
      }
    case "WithdrawalAcknowledged": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Accusé de réception de votre rétractation : ${plan}` : `Acknowledgement of your withdrawal: ${plan}`,
        body: {
          paragraphs: [
            fr
              ? `Nous accusons réception de votre rétractation, déclarée le ${at(notice.declaredAt)} avec la fonction « Renoncer au contrat ici ».`
              : `We acknowledge your withdrawal, declared on ${at(notice.declaredAt)} with the "Withdraw from this contract here" function.`,
            fr
              ? `Votre déclaration : « Je soussigné(e) ${notice.customerName} renonce au contrat ${plan} (abonnement ${notice.service.subscriptionId}) conclu le ${at(notice.concludedAt)}. »`
              : `Your declaration: "I, ${notice.customerName}, withdraw from the ${plan} contract (subscription ${notice.service.subscriptionId}) concluded on ${at(notice.concludedAt)}."`,
            fr
              ? `Le service prend fin maintenant. Nous vous remboursons ${money(notice.refundCents)} : le prix payé (${money(notice.paidCents)}) moins la part du service déjà fournie, au prorata du temps écoulé, sur votre moyen de paiement, avec une facture d'avoir.`
              : `The service ends now. We refund you ${money(notice.refundCents)}: the price paid (${money(notice.paidCents)}) minus the part of the service already provided, in proportion to the time elapsed, to your means of payment, with a credit note.`
          ],
          facts: [
            [fr ? "Contrat" : "Contract", `${plan} (${notice.service.subscriptionId})`],
            [fr ? "Déclarée par" : "Declared by", notice.customerName],
            [w.date, at(notice.declaredAt)],
            [fr ? "Remboursement" : "Refund", money(notice.refundCents)]
          ],
          action: panel
        }
      }
    }
    case "ServiceHeld": {
      const plan = notice.service.planName
      return {
        subject: fr ? `Votre service ${plan} est suspendu par nos équipes` : `Your ${plan} has been suspended by our staff`,
        body: {
          paragraphs: fr
            ? [
              `Décision : nous avons suspendu votre service ${plan} le ${at(notice.placedAt)}. Il est arrêté et inaccessible (console, alimentation et fichiers compris) jusqu'à ce que nous levions la suspension ; rien n'est supprimé et l'abonnement continue.`,
              `Faits et circonstances : ${notice.facts}`,
              `Motif : ${grounds.fr[notice.ground] ?? notice.ground}.`,
              "Cette décision a été prise par un membre de notre équipe ; aucun moyen automatisé n'a servi à la détecter ni à la décider.",
              "Vos recours : vous pouvez contester cette décision gratuitement en répondant à cet e-mail (nous réexaminerons la décision et vous répondrons) ; vous pouvez aussi saisir un organisme de règlement extrajudiciaire des litiges certifié (article 21 du règlement sur les services numériques) ou le tribunal compétent."
            ]
            : [
              `Decision: we suspended your ${plan} on ${at(notice.placedAt)}. It is stopped and cannot be used (console, power and files included) until we lift the suspension; nothing is deleted and the subscription goes on.`,
              `Facts and circumstances: ${notice.facts}`,
              `Ground: ${grounds.en[notice.ground] ?? notice.ground}.`,
              "A member of our staff took this decision; no automated means were used to detect or decide it.",
              "Your redress: you may contest this decision free of charge by replying to this e-mail (we will review the decision and answer you); you may also turn to a certified out-of-court dispute settlement body (Digital Services Act, article 21) or to the competent court."
            ],
          facts: [[w.date, at(notice.placedAt)], [w.reference, notice.holdId]],
          action: panel
        }
      }
    }
    case "HoldLifted": {
      const plan = notice.service.planName
      return {
        subject: fr ? `La suspension de ${plan} est levée` : `The suspension of ${plan} is lifted`,
        body: {
          paragraphs: [fr
            ? `Nous avons levé le ${at(notice.liftedAt)} la suspension de votre service ${plan}. S'il est toujours payé, il redémarre ; sinon, renouvelez-le depuis votre espace client.`
            : `We lifted the suspension of your ${plan} on ${at(notice.liftedAt)}. If it is paid for, it starts again; otherwise, renew it from your customer area.`],
          facts: [[w.reference, notice.holdId]],
          action: panel
        }
      }
    }
    case "RefundIssued":
      return {
        subject: fr ? `Remboursement de ${money(notice.amountCents)}` : `Refund of ${money(notice.amountCents)}`,
        body: {
          paragraphs: [fr
            ? `Nous vous avons remboursé ${money(notice.amountCents)}. Selon votre banque, il apparaîtra sur votre relevé sous 5 à 10 jours.`
            : `We refunded ${money(notice.amountCents)} to you. Depending on your bank, it shows on your statement within 5 to 10 days.`],
          facts: [[w.amount, money(notice.amountCents)], [w.reason, reasonOf(notice.reason, language)], [w.reference, notice.refundId]]
        }
      }
  }
}

/** The e-mail of a notice for its reader, in the reader's language; `publicUrl` is the panel's address (no slash). */
export const renderNotice = (notice: CustomerNotice, reader: NoticeReader, publicUrl: string): RenderedNotice => {
  const w = t[reader.language]
  const { body, subject } = compose(notice, reader.language, publicUrl.replace(/\/$/, ""))
  const { html, text } = layoutMail(reader.language, {
    ...body,
    greeting: w.greeting(reader.firstName),
    notes: [...(body.notes ?? []), ...(reader.companyName === null ? [] : [w.account(reader.companyName)])],
    signature: w.signature
  })
  return { subject, text, html }
}
