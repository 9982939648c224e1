// The account pages in Chromium: a password reset through the e-mailed link, the theme and language switches kept
// across reloads by their cookies, and API errors shown as sentences in the user's language, never as raw JSON.
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../support/browser.ts"
import { byTestId, useChromium } from "../support/chromium.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)

let accounts = 0
/** A personal account made through the API (the journey registers through the form). */
const registered = async (password: string) => {
  const email = `account.${Date.now()}.${++accounts}@example.com`
  const reply = await new Browser(server.url).post("/api/auth/register", {
    email,
    password,
    accountType: "personal",
    firstName: "Grace",
    lastName: "Hopper",
    language: "en"
  })
  expect(reply.status, reply.text).toBe(201)
  return email
}

const logIn = async (page: Page, email: string, password: string) => {
  await byTestId(page, "login-email").fill(email)
  await byTestId(page, "login-password").fill(password)
  await byTestId(page, "login-submit").click()
}

/** The reset link of the newest mail to `email` in the sandbox outbox. */
const resetLinkFor = async (email: string) => {
  let link: string | undefined
  await expect.poll(async () => {
    const mail = (await server.outbox(20)).find((m) => m.to === email)
    link = mail?.text.match(/http:\/\/\S+\/reset-password\?token=[0-9a-f]+/)?.[0]
    return link
  }, { timeout: 10_000, message: "the reset mail in the outbox" }).toBeDefined()
  return link!
}

const html = (page: Page) =>
  page.evaluate(() => ({ theme: document.documentElement.dataset["theme"], lang: document.documentElement.lang }))

const cookie = async (page: Page, name: string) => (await page.context().cookies()).find((c) => c.name === name)?.value

describe("password reset through the e-mailed link", () => {
  it("sets a new password from the link; the old one no longer logs in, the new one does, the link works once", async () => {
    const email = await registered("the original password")
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "link-forgot").click()
    await byTestId(page, "forgot-email").fill(email)
    await byTestId(page, "forgot-submit").click()
    await byTestId(page, "forgot-sent").waitFor()

    const link = await resetLinkFor(email)
    expect(new URL(link).origin).toBe(server.url)
    await page.goto(link)
    await byTestId(page, "reset-password").fill("a brand new password")
    await byTestId(page, "reset-submit").click()
    await byTestId(page, "reset-done").waitFor()
    // The used token leaves the address bar.
    expect(new URL(page.url()).search).toBe("?reset=1")

    await logIn(page, email, "the original password")
    await byTestId(page, "login-error").waitFor()
    expect(await byTestId(page, "login-error").textContent()).toBe("Wrong e-mail address or password.")
    await logIn(page, email, "a brand new password")
    await byTestId(page, "dashboard-hello").waitFor()
    expect(await byTestId(page, "dashboard-hello").textContent()).toContain("Grace")

    await byTestId(page, "logout").click()
    await page.waitForURL("**/login")
    await page.goto(link)
    await byTestId(page, "reset-password").fill("a third password!")
    await byTestId(page, "reset-submit").click()
    await byTestId(page, "reset-error").waitFor()
    const refused = (await byTestId(page, "reset-error").textContent()) ?? ""
    expect(refused.length).toBeGreaterThan(0)
    expect(refused).not.toMatch(/[{}"]|_/)
    expect(new URL(page.url()).pathname).toBe("/reset-password")
  })
})

describe("theme and language", () => {
  it("the header's switches are kept across reloads by the zh_theme and zh_lang cookies", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-form").waitFor()
    expect(await html(page)).toEqual({ theme: "light", lang: "en" })
    expect(await page.locator("h1").textContent()).toBe("Log in")

    await byTestId(page, "toggle-theme").click()
    await expect.poll(() => cookie(page, "zh_theme")).toBe("dark")
    expect((await html(page)).theme).toBe("dark")
    await byTestId(page, "toggle-language").click()
    await expect.poll(() => cookie(page, "zh_lang")).toBe("fr")
    await expect.poll(() => page.locator("h1").textContent()).toBe("Connexion")

    await page.reload()
    await byTestId(page, "login-form").waitFor()
    expect(await html(page)).toEqual({ theme: "dark", lang: "fr" })
    expect(await page.locator("h1").textContent()).toBe("Connexion")
    expect(await byTestId(page, "nav-register").textContent()).toBe("Créer un compte")
    expect(await byTestId(page, "toggle-language").textContent()).toBe("English")

    await byTestId(page, "toggle-theme").click()
    await expect.poll(() => cookie(page, "zh_theme")).toBe("light")
    await byTestId(page, "toggle-language").click()
    await expect.poll(() => cookie(page, "zh_lang")).toBe("en")
    await page.reload()
    await byTestId(page, "login-form").waitFor()
    expect(await html(page)).toEqual({ theme: "light", lang: "en" })
    expect(await page.locator("h1").textContent()).toBe("Log in")
  })

  it("a signed-in customer's choice is kept across reloads of the panel", async () => {
    const email = await registered("a signed-in password")
    const page = await chromium.newPage()
    await page.goto("/login")
    await logIn(page, email, "a signed-in password")
    await byTestId(page, "dashboard-hello").waitFor()
    await byTestId(page, "toggle-theme").click()
    await expect.poll(() => cookie(page, "zh_theme")).toBe("dark")
    await byTestId(page, "toggle-language").click()
    await expect.poll(() => byTestId(page, "dashboard-hello").textContent()).toBe("Bonjour Grace")

    await page.reload()
    await byTestId(page, "dashboard-hello").waitFor()
    expect(await html(page)).toEqual({ theme: "dark", lang: "fr" })
    expect(await byTestId(page, "dashboard-hello").textContent()).toBe("Bonjour Grace")
    expect(await byTestId(page, "nav-order").textContent()).not.toBe("Order")
  })
})

describe("the demo banner", () => {
  it("a sandbox server's panel says it is a demo, in English and in French; a real platform's does not", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-form").waitFor()
    const banner = byTestId(page, "demo-banner")
    expect(await banner.isVisible()).toBe(true)
    expect(await banner.textContent()).toMatch(/^Demo\. .*simulated.*test card.*no money moves/)
    await byTestId(page, "toggle-language").click()
    await expect.poll(() => banner.textContent()).toMatch(/^Démo\. .*simulés.*carte de test.*aucun argent ne circule/)
    await byTestId(page, "toggle-language").click()
    await expect.poll(() => banner.textContent()).toMatch(/^Demo\./)

    // The panel learns the mode from the server only: the same panel told `sandbox: false` shows no banner.
    const real = await chromium.newPage()
    await real.route("**/api/platform", (route) => route.fulfill({ json: { sandbox: false } }))
    await real.goto("/login")
    await byTestId(real, "login-form").waitFor()
    expect(await byTestId(real, "demo-banner").count()).toBe(0)
  })
})

describe("API errors", () => {
  it("an e-mail already taken is said in French to a French browser, never as raw JSON", async () => {
    const email = await registered("someone else's password")
    const page = await chromium.newPage({ locale: "fr-FR" })
    await page.goto("/register")
    await byTestId(page, "register-form").waitFor()
    expect((await html(page)).lang).toBe("fr")
    await byTestId(page, "register-first-name").fill("Marie")
    await byTestId(page, "register-last-name").fill("Curie")
    await byTestId(page, "register-email").fill(email)
    await byTestId(page, "register-password").fill("un mot de passe assez long")
    await byTestId(page, "register-submit").click()
    await byTestId(page, "register-error").waitFor()
    expect(await byTestId(page, "register-error").textContent()).toBe("Un compte existe déjà avec cette adresse e-mail.")
    expect(await byTestId(page, "register-success").isVisible()).toBe(false)
    const shown = (await page.locator("main").textContent()) ?? ""
    expect(shown).not.toContain("EMAIL_TAKEN")
    expect(shown).not.toContain("{")
  })

  it("wrong credentials are said in the language chosen in the header", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "toggle-language").click()
    await expect.poll(() => page.locator("h1").textContent()).toBe("Connexion")
    await logIn(page, "nobody@example.com", "not the password")
    await byTestId(page, "login-error").waitFor()
    expect(await byTestId(page, "login-error").textContent()).toBe("Adresse e-mail ou mot de passe incorrect.")
  })
})
