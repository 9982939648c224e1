// The customer e-mails in the running application, through a real SMTP server: a VPS ordered over HTTP while the mail
// server refuses everything is told ready once the server accepts again (the app's retry cron), with its address and
// never its root password or the hypervisor's address; a cancellation clicked twice is told once.
import { Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeQuotedPrintable, headerOf, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  leakScanner,
  type LeakScanner,
  provisionedVps,
  signedInCustomer,
  type TestServer,
  waitFor
} from "../support/vpsHttp.ts"

let smtp: SmtpSink
let server: TestServer
let scan: LeakScanner

beforeAll(async () => {
  smtp = await startSmtpSink()
  server = await startTestServer({ smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${smtp.port}`)) })
  scan = await leakScanner(server)
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await smtp?.close()
})

/** The messages received for `subject`, each decoded to its text (quoted-printable → UTF-8). */
const mailsAbout = (subject: string) =>
  smtp.received
    .filter((raw) => headerOf(raw, "Subject") === subject)
    .map((raw) => Buffer.from(decodeQuotedPrintable(raw), "latin1").toString("utf8"))

describe("customer e-mails in the app", () => {
  it("a ready VPS is told once the mail server takes mail again, with its address and no password", async () => {
    const browser = await signedInCustomer(server, scan, "notices")
    smtp.refusing = true
    const refusedBefore = smtp.refused
    const { order, rootPassword, vps } = await provisionedVps(browser, "mailed")
    await waitFor("the mail server to refuse the notice", async () => smtp.refused > refusedBefore ? true : undefined)
    smtp.refusing = false
    const [mail] = await waitFor("the ready e-mail, retried", async () => {
      const found = mailsAbout("Votre service VPS S est prêt")
      return found.length > 0 ? found : undefined
    }, 15_000)
    expect(mail).toContain(`Adresse : ${vps.address}`)
    expect(mail).toContain("Bonjour Ada,")
    expect(mail).not.toContain(rootPassword)
    scan("the ready e-mail", mail!)
    expect(order.status).toBe("completed")
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(mailsAbout("Votre service VPS S est prêt")).toHaveLength(1)
  }, 60_000)

  it("a cancellation clicked twice is told once", async () => {
    const browser = await signedInCustomer(server, scan, "cancels")
    const { subscriptionId } = await provisionedVps(browser, "cancelled")
    const clicks = await Promise.all([1, 2].map(() => browser.post(`/api/subscriptions/${subscriptionId}/cancel`, {})))
    for (const reply of clicks) expect(reply.status, reply.text).toBe(200)
    await browser.post(`/api/subscriptions/${subscriptionId}/cancel`, {})
    await waitFor("the cancellation e-mail", async () => mailsAbout("Résiliation confirmée : VPS S").length > 0 ? true : undefined)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(mailsAbout("Résiliation confirmée : VPS S")).toHaveLength(1)
  }, 60_000)
})
