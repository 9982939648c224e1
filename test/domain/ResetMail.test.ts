// Specification of the password reset e-mail: the user's language, plain text and HTML, and escaping.
import { assert, describe, it } from "@effect/vitest"
import { resetPasswordMail } from "../../domain/account/ResetMail.ts"

const link = "https://panel.zh.test/reset-password?token=" + "0f".repeat(32)

const mail = (overrides: Partial<Parameters<typeof resetPasswordMail>[0]> = {}) =>
  resetPasswordMail({ to: "alice@example.com", firstName: "Alice", language: "fr", link, validityMinutes: 60, ...overrides })

describe("the reset e-mail", () => {
  it("is addressed to the given recipient", () => {
    assert.strictEqual(mail().to, "alice@example.com")
  })

  it("in French greets, explains, links and states the validity in French", () => {
    const message = mail({ language: "fr" })
    assert.strictEqual(message.subject, "Réinitialisation de votre mot de passe ZH")
    assert.match(message.text, /^Bonjour Alice,\n/)
    assert.include(message.text, `Choisir un nouveau mot de passe : ${link}`)
    assert.include(message.text, "Ce lien est valable 60 minutes")
    assert.include(message.html, `<html lang="fr">`)
    assert.include(message.html, "<p>Bonjour Alice,</p>")
  })

  it("in English greets, explains, links and states the validity in English", () => {
    const message = mail({ language: "en", validityMinutes: 30 })
    assert.strictEqual(message.subject, "Reset your ZH password")
    assert.match(message.text, /^Hello Alice,\n/)
    assert.include(message.text, `Choose a new password: ${link}`)
    assert.include(message.text, "This link is valid for 30 minutes and works only once.")
    assert.include(message.html, `<html lang="en">`)
    assert.include(message.html, `<a href="${link}">Choose a new password</a>`)
  })

  it("escapes HTML in the first name in the HTML part", () => {
    const message = mail({ firstName: `<script>alert("x")</script> & 'co'` })
    assert.notInclude(message.html, "<script>")
    assert.include(message.html, "Bonjour &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;,")
  })

  it("keeps the first name as typed in the plain-text part", () => {
    const message = mail({ firstName: "<script>" })
    assert.include(message.text, "Bonjour <script>,")
  })

  it("escapes the link inside the href attribute", () => {
    const message = mail({ link: `${link}&lang="fr"` })
    assert.include(message.html, `href="${link}&amp;lang=&quot;fr&quot;"`)
  })
})
