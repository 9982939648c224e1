// The printed words of an invoice, in French and in English; the legal mentions keep their French wording in both.
import type { Language } from "../../domain/account/User.ts"

export interface Texts {
  readonly invoice: string
  readonly creditNote: string
  readonly number: string
  readonly issued: string
  readonly period: string
  readonly seller: string
  readonly buyer: string
  readonly corrects: string
  readonly description: string
  readonly quantity: string
  readonly unitPrice: string
  readonly vatRate: string
  readonly total: string
  readonly totalExcludingVat: string
  readonly vat: string
  readonly totalIncludingVat: string
  readonly paidOn: (date: string) => string
  readonly refundedOn: (date: string) => string
  readonly services: string
  readonly lateFees: (rate: string) => string
  readonly recoveryIndemnity: string
  readonly vatOnDebits: string
  readonly reverseCharge: string
  readonly outsideScope: string
  readonly capital: string
}

const fr: Texts = {
  invoice: "Facture",
  creditNote: "Avoir",
  number: "N°",
  issued: "Date d'émission",
  period: "Période de service",
  seller: "Vendeur",
  buyer: "Client",
  corrects: "Avoir sur la facture",
  description: "Désignation",
  quantity: "Qté",
  unitPrice: "Prix unitaire HT",
  vatRate: "TVA",
  total: "Total HT",
  totalExcludingVat: "Total HT",
  vat: "TVA",
  totalIncludingVat: "Total TTC",
  paidOn: (date) => `Payée le ${date} par carte bancaire.`,
  refundedOn: (date) => `Remboursé le ${date} sur la carte bancaire.`,
  services: "Catégorie d'opération : prestations de services.",
  lateFees: (rate) => `Pénalités de retard : ${rate}.`,
  recoveryIndemnity: "Indemnité forfaitaire pour frais de recouvrement : 40 €.",
  vatOnDebits: "Option pour le paiement de la taxe d'après les débits.",
  reverseCharge: "Autoliquidation (art. 283-2 du CGI, art. 196 de la directive 2006/112/CE).",
  outsideScope: "TVA non applicable : prestation hors du champ de la TVA française (art. 259 B du CGI).",
  capital: "au capital de"
}

const en: Texts = {
  invoice: "Invoice",
  creditNote: "Credit note",
  number: "No.",
  issued: "Issue date",
  period: "Service period",
  seller: "Seller",
  buyer: "Customer",
  corrects: "Credit note for invoice",
  description: "Description",
  quantity: "Qty",
  unitPrice: "Unit price excl. VAT",
  vatRate: "VAT",
  total: "Total excl. VAT",
  totalExcludingVat: "Total excl. VAT",
  vat: "VAT",
  totalIncludingVat: "Total incl. VAT",
  paidOn: (date) => `Paid on ${date} by card.`,
  refundedOn: (date) => `Refunded on ${date} to the card.`,
  services: "Category of operation: supply of services (prestations de services).",
  lateFees: (rate) => `Late-payment penalties: ${rate}.`,
  recoveryIndemnity: "Fixed recovery indemnity: €40.",
  vatOnDebits: "Option pour le paiement de la taxe d'après les débits (VAT on debits).",
  reverseCharge: "Reverse charge - Autoliquidation (art. 283-2 CGI, art. 196 Directive 2006/112/EC).",
  outsideScope: "Outside the scope of French VAT (art. 259 B CGI).",
  capital: "share capital"
}

export const textsFor = (language: Language): Texts => language === "fr" ? fr : en
