// The password reset e-mail, in the user's language, as plain text and HTML.
import type { MailMessage } from "../../ports/Mailer.ts"
import type { Language } from "./User.ts"

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const texts = {
  fr: {
    subject: "Réinitialisation de votre mot de passe ZH",
    greeting: (name: string) => `Bonjour ${name},`,
    intro: "Vous avez demandé à réinitialiser le mot de passe de votre compte ZH.",
    action: "Choisir un nouveau mot de passe",
    validity: (minutes: number) => `Ce lien est valable ${minutes} minutes et ne peut servir qu'une fois.`,
    ignore: "Si vous n'êtes pas à l'origine de cette demande, ignorez ce message : votre mot de passe ne change pas.",
    signature: "L'équipe ZH"
  },
  en: {
    subject: "Reset your ZH password",
    greeting: (name: string) => `Hello ${name},`,
    intro: "You asked to reset the password of your ZH account.",
    action: "Choose a new password",
    validity: (minutes: number) => `This link is valid for ${minutes} minutes and works only once.`,
    ignore: "If you did not ask for this, ignore this message: your password stays the same.",
    signature: "The ZH team"
  }
} as const

export const resetPasswordMail = (options: {
  readonly to: string
  readonly firstName: string
  readonly language: Language
  readonly link: string
  readonly validityMinutes: number
}): MailMessage => {
  const t = texts[options.language]
  const text = [
    t.greeting(options.firstName),
    "",
    t.intro,
    `${t.action}: ${options.link}`,
    "",
    t.validity(options.validityMinutes),
    t.ignore,
    "",
    t.signature
  ].join("\n")
  const link = escapeHtml(options.link)
  const html = `<!doctype html>
<html lang="${options.language}"><body style="font-family:sans-serif;line-height:1.5">
<p>${escapeHtml(t.greeting(options.firstName))}</p>
<p>${escapeHtml(t.intro)}</p>
<p><a href="${link}">${escapeHtml(t.action)}</a></p>
<p style="font-size:0.9em;color:#555">${escapeHtml(t.validity(options.validityMinutes))}<br>${escapeHtml(t.ignore)}</p>
<p>${escapeHtml(t.signature)}</p>
</body></html>`
  return { to: options.to, subject: t.subject, text, html }
}
