// The rest of the panel in Chromium, beyond the customer's journey: professional registration and the registry's
// answers, the professional area's own theme, keyboard use and phone widths, the file manager, backups, the VPS
// console's resize, renewing and cancelling, and suspended services. One server, one VPS and one game server
// (ordered through the API), shared by the tests in file order.
import { readFile } from "node:fs/promises"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isValidSiret } from "../../domain/account/Siret.ts"
import { addMonth } from "../../domain/billing/Billing.ts"
import { Browser } from "../support/browser.ts"
import { byTestId, pageFetchStatus, useChromium } from "../support/chromium.ts"
import { lapseGame, provisionedGame } from "../support/gameHttp.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { lapse, leakScanner, provisionedVps, ScannedBrowser } from "../support/vpsHttp.ts"
import { fillBillingProfile } from "../support/checkout.ts"
import { SandboxSirets } from "../support/sandboxRegistries.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
const customer = { email: `panel.${Date.now()}@example.com`, password: "a panel test password" }
let vps: Awaited<ReturnType<typeof provisionedVps>>
let game: Awaited<ReturnType<typeof provisionedGame>>

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
  const api = new ScannedBrowser(server.url, await leakScanner(server))
  const registered = await api.post("/api/auth/register", {
    ...customer,
    accountType: "personal",
    firstName: "Katherine",
    lastName: "Johnson",
    language: "en"
  })
  expect(registered.status, registered.text).toBe(201)
  const login = await api.post("/api/auth/login", { ...customer, rememberMe: false })
  expect(login.status, login.text).toBe(200)
  // Billing details first: an order needs them (BILLING_PROFILE_REQUIRED).
  await fillBillingProfile(api)
  ;[vps, game] = await Promise.all([provisionedVps(api, "panel-vps"), provisionedGame(api)])
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)

/** Logs in through the form and waits for the dashboard. */
const logIn = async (page: Page, email = customer.email, password = customer.password) => {
  await page.goto("/login")
  await byTestId(page, "login-email").fill(email)
  await byTestId(page, "login-password").fill(password)
  await byTestId(page, "login-submit").click()
  await byTestId(page, "dashboard-hello").waitFor()
}

const signedInPage = async () => {
  const page = await chromium.newPage()
  await logIn(page)
  return page
}

const cookie = async (page: Page, name: string) => (await page.context().cookies()).find((c) => c.name === name)?.value

/** What an error box must never show: an error code, an envelope, a stack. */
const expectReadable = (text: string) => {
  expect(text.length).toBeGreaterThan(0)
  expect(text).not.toMatch(/[{}"]|[A-Z]+_[A-Z]+|Error:/)
}

describe("professional registration", () => {
  const register = async (siret: string, email: string) => {
    const page = await chromium.newPage()
    await page.goto("/register")
    await byTestId(page, "register-type-professional").check()
    await byTestId(page, "register-siret").fill(siret)
    await byTestId(page, "register-first-name").fill("Marcel")
    await byTestId(page, "register-last-name").fill("Boiteux")
    await byTestId(page, "register-email").fill(email)
    await byTestId(page, "register-password").fill("a professional password")
    await byTestId(page, "register-submit").click()
    return page
  }

  /** Shows the registry's refusal as a sentence, and nothing was saved: the account cannot log in. */
  const expectRefused = async (page: Page, email: string, sentence: string) => {
    await byTestId(page, "register-error").waitFor()
    const shown = (await byTestId(page, "register-error").textContent()) ?? ""
    expect(shown).toBe(sentence)
    expectReadable(shown)
    expect(await byTestId(page, "register-success").isVisible()).toBe(false)
    expect(await byTestId(page, "register-form").isVisible()).toBe(true)
    const login = await new Browser(server.url).post("/api/auth/login", { email, password: "a professional password", rememberMe: false })
    expect(login.status).toBe(401)
  }

  it("a SIRET the registry knows shows the company's name, on the confirmation and on the dashboard", async () => {
    const email = `edf.${Date.now()}@example.com`
    const page = await register(`${SandboxSirets.edf.slice(0, 3)} ${SandboxSirets.edf.slice(3, 6)} ${SandboxSirets.edf.slice(6)}`, email)
    await byTestId(page, "register-success").waitFor()
    expect(await byTestId(page, "register-success").getAttribute("data-company")).toBe("ELECTRICITE DE FRANCE")
    expect(await byTestId(page, "register-success").textContent()).toContain("ELECTRICITE DE FRANCE")
    await logIn(page, email, "a professional password")
    expect(await byTestId(page, "dashboard-company").textContent()).toContain("ELECTRICITE DE FRANCE")
    // A professional is no consumer: the order page asks no express request to start now, and says why.
    await page.goto("/order/vps-s")
    await byTestId(page, "order-form").waitFor()
    expect(await byTestId(page, "order-express-start").count()).toBe(0)
    expect(await byTestId(page, "order-pro-note").textContent()).toContain("no statutory withdrawal right")
  })

  it("a well-formed SIRET the registry does not know is said plainly and creates nothing", async () => {
    const unknown = Array.from({ length: 10 }, (_, d) => `7328293200008${d}`).find(isValidSiret)!
    expect(unknown).toBe("73282932000082")
    expect(Object.values(SandboxSirets)).not.toContain(unknown)
    const email = `unknown.${Date.now()}@example.com`
    const page = await register(unknown, email)
    await expectRefused(page, email, "The business registry does not know this SIRET number.")
  })

  it("an unreachable registry is said plainly (try again later) and creates nothing", async () => {
    const email = `down.${Date.now()}@example.com`
    const page = await register(SandboxSirets.registryDown, email)
    await expectRefused(page, email,
      "The business registry cannot be reached right now. Nothing was saved; please try again in a few minutes.")
  })
})

describe("the professional area's theme", () => {
  it("a professional's theme switch is saved in zh_pro_theme, not zh_theme, kept across reloads, and only in that area", async () => {
    const email = `pro.${Date.now()}@example.com`
    const registered = await new Browser(server.url).post("/api/auth/register", {
      email,
      password: "a professional password",
      accountType: "professional",
      siret: SandboxSirets.googleFrance,
      firstName: "Sundar",
      lastName: "Pichai",
      language: "en"
    })
    expect(registered.status, registered.text).toBe(201)
    const page = await chromium.newPage()
    await logIn(page, email, "a professional password")
    const html = () => page.evaluate(() => ({ ...document.documentElement.dataset }))
    expect(await html()).toMatchObject({ theme: "light", area: "pro" })

    await byTestId(page, "toggle-theme").click()
    await expect.poll(() => cookie(page, "zh_pro_theme")).toBe("dark")
    expect(await cookie(page, "zh_theme")).toBeUndefined()
    expect((await html()).theme).toBe("dark")

    await page.reload()
    await byTestId(page, "dashboard-hello").waitFor()
    expect(await html()).toMatchObject({ theme: "dark", area: "pro" })
    expect(await cookie(page, "zh_theme")).toBeUndefined()

    // Signed out, the personal theme applies again (never chosen: the browser's light).
    await byTestId(page, "logout").click()
    await byTestId(page, "login-form").waitFor()
    expect(await html()).toMatchObject({ theme: "light", area: "personal" })
    expect(await cookie(page, "zh_pro_theme")).toBe("dark")
  })
})

describe("keyboard and phone widths", () => {
  /** The focused element and whether its focus is drawn (an outline or a box-shadow). */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const el = document.activeElement
      if (el === null || el === document.body) return { testid: null, ring: false }
      const style = getComputedStyle(el)
      const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0
      return { testid: el.getAttribute("data-testid"), ring: outline || style.boxShadow !== "none" }
    })

  it("the login form is filled and sent with the keyboard alone, every focused control visibly marked", async () => {
    const page = await chromium.newPage()
    await page.goto("/login")
    await byTestId(page, "login-form").waitFor()
    const seen: Array<string | null> = []
    for (let i = 0; i < 12 && seen.at(-1) !== "login-email"; i++) {
      await page.keyboard.press("Tab")
      const now = await focused(page)
      expect(now.ring, `the focus on ${now.testid ?? "an element"} is visible`).toBe(true)
      seen.push(now.testid)
    }
    expect(seen.at(-1)).toBe("login-email")
    await page.keyboard.type(customer.email)
    await page.keyboard.press("Tab")
    expect(await focused(page)).toEqual({ testid: "login-password", ring: true })
    await page.keyboard.type(customer.password)
    await page.keyboard.press("Tab")
    expect(await focused(page)).toEqual({ testid: "login-remember", ring: true })
    await page.keyboard.press("Space")
    expect(await byTestId(page, "login-remember").isChecked()).toBe(true)
    await page.keyboard.press("Tab")
    expect(await focused(page)).toEqual({ testid: "login-submit", ring: true })
    await page.keyboard.press("Enter")
    await byTestId(page, "dashboard-hello").waitFor()
  })

  it("at 360×740 the dashboard, the plans, the order form, the VPS and the game pages fit the width", async () => {
    const page = await signedInPage()
    await page.setViewportSize({ width: 360, height: 740 })
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    const pages: ReadonlyArray<readonly [string, string]> = [
      ["/", `subscription-${game.subscriptionId}`],
      ["/order", "plan-choose-vps-s"],
      ["/order/vps-s", "order-form"],
      [`/vps/${vps.vpsId}`, "snapshot-list"],
      [`/game/${game.gameServer.id}`, "backups-list"]
    ]
    for (const [path, ready] of pages) {
      await page.goto(path)
      await byTestId(page, ready).waitFor()
      await page.waitForLoadState("networkidle")
      expect(await overflow(), `${path} is wider than the screen`).toBeLessThanOrEqual(0)
    }
  })
})

describe("the game server's file manager", () => {
  it("creates a folder, goes in and back up, creates, edits, renames and deletes a text file", async () => {
    const page = await signedInPage()
    await page.goto(`/game/${game.gameServer.id}`)
    await byTestId(page, "files-list").locator("table, p").first().waitFor()
    expect(await byTestId(page, "files-up").isDisabled()).toBe(true)

    await byTestId(page, "files-new-folder").click()
    await byTestId(page, "files-new-folder-name").fill("plugins")
    await byTestId(page, "prompt-ok").click()
    await expect.poll(() => byTestId(page, "file-plugins").getAttribute("data-kind")).toBe("folder")
    await byTestId(page, "file-open-plugins").click()
    await expect.poll(() => byTestId(page, "files-path").textContent()).toContain("/plugins")
    // The path changes before the folder's listing replaces the parent's: wait for the new listing.
    await expect.poll(() => byTestId(page, "file-plugins").count()).toBe(0)

    await byTestId(page, "files-new-file").click()
    await byTestId(page, "files-new-file-name").fill("notes.txt")
    await byTestId(page, "prompt-ok").click()
    await expect.poll(() => byTestId(page, "file-notes.txt").getAttribute("data-kind")).toBe("file")
    const content = byTestId(page, "file-editor-content")
    await content.waitFor()
    expect(await content.inputValue()).toBe("")
    await content.fill("motd=Hello from the panel\nmax-players=12\n")
    await byTestId(page, "file-editor-save").click()
    await expect.poll(() => byTestId(page, "status").textContent()).toBe("Saved.")
    await byTestId(page, "file-editor-close").click()
    await expect.poll(() => byTestId(page, "file-editor").isVisible()).toBe(false)
    await byTestId(page, "file-open-notes.txt").click()
    await expect.poll(() => byTestId(page, "file-editor-content").inputValue()).toBe("motd=Hello from the panel\nmax-players=12\n")
    await byTestId(page, "file-editor-close").click()

    await byTestId(page, "file-rename-notes.txt").click()
    await byTestId(page, "files-rename-input").fill("readme.txt")
    await byTestId(page, "prompt-ok").click()
    await byTestId(page, "file-readme.txt").waitFor()
    expect(await byTestId(page, "file-notes.txt").count()).toBe(0)
    await byTestId(page, "file-open-readme.txt").click()
    await expect.poll(() => byTestId(page, "file-editor-content").inputValue()).toBe("motd=Hello from the panel\nmax-players=12\n")
    await byTestId(page, "file-editor-close").click()

    await byTestId(page, "file-delete-readme.txt").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => byTestId(page, "file-readme.txt").count()).toBe(0)
    expect(await byTestId(page, "files-error").isVisible()).toBe(false)

    await byTestId(page, "files-up").click()
    await expect.poll(() => byTestId(page, "file-plugins").count()).toBe(1)
    expect(await byTestId(page, "files-up").isDisabled()).toBe(true)
  })
})

describe("the game server's backups", () => {
  it("creates one, locks it against deletion, unlocks, downloads, restores and deletes it", async () => {
    const page = await signedInPage()
    await page.goto(`/game/${game.gameServer.id}`)
    await byTestId(page, "backups-list").locator("table, p").first().waitFor()
    await byTestId(page, "backup-name").fill("nightly")
    await byTestId(page, "backup-create").click()
    const row = byTestId(page, "backups-list").locator(`tr[data-backup-name="nightly"]`)
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 20_000 }).toBe("completed")
    const button = (testid: string) => row.locator(`[data-testid="${testid}"]`)

    await button("backup-lock").click()
    await expect.poll(() => row.getAttribute("data-locked")).toBe("true")
    await row.locator(`[data-testid="backup-locked"]`).waitFor()
    expect(await button("backup-delete").isDisabled()).toBe(true)
    expect(await button("backup-lock").textContent()).toBe("Unlock")
    await button("backup-lock").click()
    await expect.poll(() => row.getAttribute("data-locked")).toBe("false")
    expect(await button("backup-delete").isEnabled()).toBe(true)

    const [download] = await Promise.all([page.waitForEvent("download"), button("backup-download").click()])
    expect((await readFile(await download.path())).length).toBeGreaterThan(0)

    // A file removed after the backup comes back with the restore.
    await byTestId(page, "file-delete-eula.txt").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => byTestId(page, "file-eula.txt").count()).toBe(0)
    await button("backup-restore").click()
    await byTestId(page, "confirm-dialog").waitFor()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => byTestId(page, "status").textContent()).toBe("Restoring; the server is busy until it finishes.")
    expect(await byTestId(page, "backups-error").isVisible()).toBe(false)
    // The panel refuses file and backup actions (409) until the restore has landed.
    const files = `/api/client/servers/${game.gameServer.identifier}/files/list?directory=%2F`
    await expect.poll(() => pageFetchStatus(page, files), { message: "the restore to finish" }).toBe(200)
    await page.reload()
    await byTestId(page, "file-eula.txt").waitFor()

    await button("backup-delete").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(0)
    expect(await byTestId(page, "backups-error").isVisible()).toBe(false)
  })
})

describe("the VPS console", () => {
  it("a narrower window resizes the terminal and the relay is told its new size", async () => {
    const page = await signedInPage()
    const resizes: Array<{ cols: number; rows: number }> = []
    page.on("websocket", (socket) => {
      if (!socket.url().endsWith(`/api/vps/${vps.vpsId}/console`)) return
      socket.on("framesent", ({ payload }) => {
        if (typeof payload !== "string") return
        const frame = JSON.parse(payload) as { type?: string; cols?: number; rows?: number }
        if (frame.type === "resize" && frame.cols !== undefined && frame.rows !== undefined) resizes.push({ cols: frame.cols, rows: frame.rows })
      })
    })
    await page.goto(`/vps/${vps.vpsId}`)
    const terminal = byTestId(page, "vps-terminal")
    await expect.poll(() => terminal.getAttribute("data-connected")).toBe("true")
    await expect.poll(() => resizes.length).toBeGreaterThan(0)
    const wide = resizes.at(-1)!
    // The rows xterm.js draws are the rows the relay was last told of.
    const shownRowsMatch = async () => (await terminal.locator(".xterm-rows > div").count()) === resizes.at(-1)!.rows
    await expect.poll(shownRowsMatch).toBe(true)

    await page.setViewportSize({ width: 360, height: 740 })
    await expect.poll(() => resizes.at(-1)!.cols).toBeLessThan(wide.cols)
    expect(resizes.at(-1)!.cols).toBeGreaterThan(10)
    await expect.poll(shownRowsMatch).toBe(true)
    expect(await terminal.getAttribute("data-connected")).toBe("true")
  })
})

describe("subscriptions: renew, suspension, cancel", () => {
  const periodEnd = async (page: Page, subscriptionId: string) =>
    new Date((await byTestId(page, `subscription-period-end-${subscriptionId}`).getAttribute("datetime")) ?? "").getTime()
  const subscriptionState = (page: Page, subscriptionId: string) =>
    byTestId(page, `subscription-state-${subscriptionId}`).getAttribute("data-state")

  it("renewing from the dashboard moves the period end one month on", async () => {
    const page = await signedInPage()
    const before = await periodEnd(page, game.subscriptionId)
    expect(before).toBeGreaterThan(Date.now())
    await byTestId(page, `subscription-renew-${game.subscriptionId}`).click()
    // It charges at once: asked first, with the price, and nothing moves on "Cancel".
    await byTestId(page, "confirm-dialog").waitFor()
    expect(await byTestId(page, "confirm-dialog").textContent()).toMatch(/^Renew .+ now\? €\d+\.\d\d incl\. VAT is charged at once, for one more month\./)
    await byTestId(page, "confirm-cancel").click()
    await expect.poll(() => byTestId(page, "confirm-dialog").count()).toBe(0)
    expect(await periodEnd(page, game.subscriptionId)).toBe(before)
    await byTestId(page, `subscription-renew-${game.subscriptionId}`).click()
    await byTestId(page, "confirm-ok").click()
    // The charge and the redraw take their time on a loaded machine (the poll waits 1 s by default).
    await expect.poll(() => periodEnd(page, game.subscriptionId), { timeout: 15_000 }).toBe(addMonth(new Date(before)).getTime())
    expect(await subscriptionState(page, game.subscriptionId)).toBe("active")
    await page.reload()
    await byTestId(page, `subscription-${game.subscriptionId}`).waitFor()
    expect(await periodEnd(page, game.subscriptionId)).toBe(addMonth(new Date(before)).getTime())
  })

  it("lapsed services say they are suspended and disable their actions; renewing brings the game server back", async () => {
    const lapsedAt = new Date(Date.now() - 60_000)
    await lapse(server, vps.subscriptionId, lapsedAt)
    await lapseGame(server, game.subscriptionId, lapsedAt)

    const page = await signedInPage()
    await byTestId(page, `subscription-${vps.subscriptionId}`).waitFor()
    expect(await subscriptionState(page, vps.subscriptionId)).toBe("suspended")
    // Each subscription names its service as its product describes it: the VPS's host name and address.
    expect(await byTestId(page, `subscription-service-${vps.subscriptionId}`).textContent()).toBe(`${vps.vps.hostname} · ${vps.vps.address}`)
    expect(await subscriptionState(page, game.subscriptionId)).toBe("suspended")

    await page.goto(`/vps/${vps.vpsId}`)
    await expect.poll(() => byTestId(page, "vps-state").getAttribute("data-state")).toBe("suspended")
    await byTestId(page, "vps-suspended").waitFor()
    for (const action of ["vps-start", "vps-shutdown", "vps-stop", "vps-reset", "vps-reset-password", "snapshot-create", "vps-console-connect"]) {
      expect(await byTestId(page, action).isDisabled(), `${action} is disabled`).toBe(true)
    }

    await page.goto(`/game/${game.gameServer.id}`)
    await expect.poll(() => byTestId(page, "game-state").getAttribute("data-state")).toBe("suspended")
    await byTestId(page, "game-suspended").waitFor()
    expect(await byTestId(page, "game-suspended").textContent()).toContain("suspended")
    for (const action of ["game-power-start", "game-power-stop", "game-power-restart", "game-power-kill", "game-command",
      "files-new-folder", "files-new-file", "files-upload-input", "backup-create"]) {
      expect(await byTestId(page, action).isDisabled(), `${action} is disabled`).toBe(true)
    }

    await byTestId(page, "nav-dashboard").click()
    await byTestId(page, `subscription-renew-${game.subscriptionId}`).click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => subscriptionState(page, game.subscriptionId), { timeout: 15_000 }).toBe("active")
    expect(await periodEnd(page, game.subscriptionId)).toBeGreaterThan(Date.now())
    await expect.poll(async () => {
      await page.goto(`/game/${game.gameServer.id}`)
      return byTestId(page, "game-state").getAttribute("data-state")
    }, { timeout: 20_000, message: "the game server to be active again" }).toBe("active")
    expect(await byTestId(page, "game-suspended").isVisible()).toBe(false)
    expect(await byTestId(page, "game-power-start").isEnabled()).toBe(true)
    await byTestId(page, "files-list").locator("table").waitFor()
    expect(await byTestId(page, "file-plugins").count()).toBe(1)
  })

  it("cancelling asks first, then says the subscription ends at the period end", async () => {
    const page = await signedInPage()
    const cancel = byTestId(page, `subscription-cancel-${game.subscriptionId}`)
    const row = byTestId(page, `subscription-${game.subscriptionId}`)
    await cancel.click()
    await byTestId(page, "confirm-cancel").click()
    expect(await row.textContent()).not.toContain("ends at period end")
    await cancel.click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => row.textContent()).toContain("ends at period end")
    await expect.poll(() => byTestId(page, `subscription-cancel-${game.subscriptionId}`).isDisabled()).toBe(true)
    expect(await subscriptionState(page, game.subscriptionId)).toBe("active")
    await page.reload()
    await row.waitFor()
    expect(await row.textContent()).toContain("ends at period end")
  })
})
