// The panel's words (app/web/src/i18n.ts and the back-office's texts): dates in Paris time whatever the browser's time
// zone, counts in the right grammatical number, decimals, provisioning steps, product kinds, audit actions and customer
// e-mails in the page's language rather than as codes, in both languages.
import { afterEach, describe, expect, it, vi } from "vitest"
import { AUDIT_ACTIONS } from "../../domain/audit/AuditEvent.ts"
import type { CustomerNoticeTag } from "../../domain/notices/CustomerNotice.ts"
import { noticeName } from "../../app/web/src/views/admin/opsTexts.ts"
import { adminText, auditActionText, kindName } from "../../app/web/src/views/admin/texts.ts"
import { inLanguage, restoreLanguageAfterEach } from "../support/panelLanguage.ts"
import { formatDate, formatDateTime, formatDecimal, plural, stepName } from "../../app/web/src/i18n.ts"

restoreLanguageAfterEach()
afterEach(() => {
  vi.unstubAllEnvs()
})

describe("dates", () => {
  it("an instant just after midnight in Paris is that Paris day, whatever the process's time zone", () => {
    // 23:30 UTC on 10 December is 00:30 on 11 December in Paris (CET, UTC+1).
    for (const zone of ["UTC", "America/New_York", "Asia/Tokyo"]) {
      vi.stubEnv("TZ", zone)
      inLanguage("fr")
      expect(formatDate("2026-12-10T23:30:00Z")).toBe("11 décembre 2026")
      expect(formatDateTime("2026-12-10T23:30:00Z")).toBe("11 déc. 2026, 00:30")
      inLanguage("en")
      expect(formatDate("2026-12-10T23:30:00Z")).toBe("11 December 2026")
    }
  })

  it("summer time: 22:30 UTC on 1 July is 00:30 on 2 July in Paris (CEST, UTC+2)", () => {
    inLanguage("fr")
    expect(formatDateTime("2026-07-01T22:30:00Z")).toBe("2 juil. 2026, 00:30")
  })
})

describe("plural", () => {
  it("French: 0 and 1 take the singular, 2 the plural", () => {
    inLanguage("fr")
    expect(plural("order.backups", 0)).toBe("0 sauvegarde")
    expect(plural("order.backups", 1)).toBe("1 sauvegarde")
    expect(plural("order.backups", 2)).toBe("2 sauvegardes")
    expect(plural("order.snapshots", 1)).toBe("1 instantané")
  })

  it("English: 1 only takes the singular", () => {
    inLanguage("en")
    expect(plural("order.backups", 1)).toBe("1 backup")
    expect(plural("order.backups", 0)).toBe("0 backups")
    expect(plural("order.snapshots", 5)).toBe("5 snapshots")
  })
})

describe("formatDecimal", () => {
  it("a game server's CPU figure reads with a decimal comma in French and a point in English", () => {
    inLanguage("fr")
    expect(formatDecimal(12.345, 1)).toBe("12,3")
    expect(formatDecimal(0, 1)).toBe("0,0")
    inLanguage("en")
    expect(formatDecimal(12.345, 1)).toBe("12.3")
  })
})

describe("kindName (the back-office)", () => {
  it("a product kind reads in the page's language, not as its code", () => {
    inLanguage("fr")
    expect(kindName("game")).toBe("Serveur de jeu")
    expect(kindName("vps")).toBe("VPS")
    inLanguage("en")
    expect(kindName("game")).toBe("Game server")
    // A kind without words yet (a product added later) stays readable as its code.
    expect(kindName("mail")).toBe("mail")
  })
})

/** In both languages, `words` gives each code something other than the code itself. */
const expectWordsForEvery = (codes: ReadonlyArray<string>, words: (code: string) => string) => {
  for (const lang of ["fr", "en"] as const) {
    inLanguage(lang)
    for (const code of codes) expect(words(code), `${lang}: ${code}`).not.toBe(code)
  }
}

describe("auditActionText (the back-office's audit trail)", () => {
  it("every action the audit log knows reads in words in both languages, never as its code", () => {
    expectWordsForEvery(AUDIT_ACTIONS, auditActionText)
    inLanguage("fr")
    expect(auditActionText("payment.succeeded")).toBe("Paiement reçu")
    expect(auditActionText("auth.sign_in")).toBe("Connexion")
  })
})

describe("stepName", () => {
  it("a provisioning step reads in the page's language, not as the server's English name", () => {
    inLanguage("fr")
    expect(stepName("game", 5, "Installing the game")).toBe("Installation du jeu")
    expect(stepName("vps", 0, "Payment")).toBe("Paiement")
    expect(stepName("vps", 0, "Queued")).toBe("En file d'attente")
    // A step this panel has no words for keeps the server's name.
    expect(stepName("mail", 2, "Creating the mailbox")).toBe("Creating the mailbox")
  })
})

describe("noticeName (the back-office's e-mails of a customer)", () => {
  // Typed against the notices' union: a new kind of e-mail fails to compile here until it is listed.
  const tags: Record<CustomerNoticeTag, true> = {
    AuthenticationNeeded: true, CancellationConfirmed: true, ExpressStartConfirmed: true, FinalWarning: true, HoldLifted: true,
    OrderPaid: true, OrderRetryOffered: true, PaymentFailed: true, RefundIssued: true, RenewalPaid: true, RenewalReminder: true,
    ServiceEnded: true, ServiceHeld: true, ServiceReady: true, ServiceSuspended: true, WithdrawalAcknowledged: true
  }

  it("every kind of customer e-mail reads in words in both languages, never as its code", () => {
    expectWordsForEvery(Object.keys(tags), noticeName)
    inLanguage("fr")
    expect(noticeName("HoldLifted")).toBe("Suspension levée")
    expect(noticeName("SomethingNew")).toBe("SomethingNew")
  })
})

describe("the back-office's catalog", () => {
  it("a pool's fill reads without a noun agreeing with a count of one (\"1 utilisées\")", () => {
    inLanguage("fr")
    expect(adminText("admin.catalog.fillValue", { assigned: 1, free: 252 })).toBe("utilisées : 1, libres : 252")
  })
})
