// The password reset e-mail, in the user's language, as plain text and HTML (the shared layout of every e-mail).
import type { MailMessage } from "../../ports/Mailer.ts"
import { layoutMail } from "../notices/mailLayout.ts"
import type { Language } from "./User.ts"

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
  const body = layoutMail(options.language, {
    greeting: t.greeting(options.firstName),
    paragraphs: [t.intro],
    action: { label: t.action, url: options.link },
    notes: [t.validity(options.validityMinutes), t.ignore],
    signature: t.signature
  })
  return { to: options.to, subject: t.subject, ...body }
}
