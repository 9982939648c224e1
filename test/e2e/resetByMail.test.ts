// Forgot → e-mail → reset, through a real SMTP server started inside the test, parsing the link out of the mail.
import { Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { decodeQuotedPrintable, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { startTestServer } from "../support/testServer.ts"

let smtp: SmtpSink
let received: ReadonlyArray<string>
let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  smtp = await startSmtpSink()
  received = smtp.received
  server = await startTestServer({ smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${smtp.port}`)) })
})

afterAll(async () => {
  await server.stop()
  await smtp.close()
})

describe("password reset by e-mail", () => {
  it("mails a link to PUBLIC_URL/reset-password whose token resets the password once", async () => {
    const browser = new Browser(server.url)
    const email = `mail.${Date.now()}@example.com`
    expect((await browser.post("/api/auth/register", {
      email,
      password: "original password",
      accountType: "personal",
      firstName: "Grace",
      lastName: "Hopper",
      language: "en"
    })).status).toBe(201)

    expect((await browser.post("/api/auth/forgot-password", { email })).status).toBe(202)
    const deadline = Date.now() + 10_000
    while (!received.some((m) => m.includes(email)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const raw = received.find((m) => m.includes(email))
    expect(raw).toBeDefined()
    const mail = decodeQuotedPrintable(raw!)
    expect(mail).toMatch(/^Subject: Reset your ZH password/m)
    expect(mail).toMatch(/^From: .*no-reply@panel\.test/m)
    expect(mail).toContain("multipart/alternative")
    expect(mail).toContain("text/html")
    const links = [...mail.matchAll(/http:\/\/panel\.test\/reset-password\?token=([0-9a-f]{64})/g)].map((m) => m[1])
    expect(links.length).toBeGreaterThanOrEqual(2) // in the text part and in the HTML part
    const token = links[0]

    expect((await browser.post("/api/auth/reset-password", { token, password: "brand new password" })).status).toBe(204)
    expect((await browser.post("/api/auth/login", { email, password: "brand new password" })).status).toBe(200)
    expect((await browser.post("/api/auth/login", { email, password: "original password" })).status).toBe(401)
    expect((await browser.post("/api/auth/reset-password", { token, password: "third password!" })).status).toBe(400)
  })

  it("sends nothing for an unknown address but answers the same", async () => {
    const before = received.length
    const reply = await new Browser(server.url).post("/api/auth/forgot-password", { email: "nobody@example.com" })
    expect(reply.status).toBe(202)
    await new Promise((r) => setTimeout(r, 300))
    expect(received.length).toBe(before)
  })
})
