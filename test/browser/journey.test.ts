// A customer's whole journey through the panel in Chromium, one step per test on one page: register, log in, order
// a VPS (progress to the end, root password once), its serial console, order a game server, its console, files,
// a backup, log out. Later steps are skipped once one fails (each depends on the one before).
import { readFile } from "node:fs/promises"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest"
import { byTestId, expectTerminalToShow, pageFetchStatus, useChromium } from "../support/chromium.ts"
import { sandboxStripe, startSelfAddressedTestServer, stripePayments } from "../support/testServer.ts"
import { ed25519PublicKey } from "../support/vpsHttp.ts"
import { seriousViolations } from "../support/axe.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
  checkoutOrigin = (await server.runtime.runPromise(sandboxStripe)).baseUrl
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

let checkoutOrigin = ""
const chromium = useChromium(() => server.url, { keepPages: true, otherOrigins: () => [checkoutOrigin] })

describe("the customer journey in the panel", () => {
  let page: Page
  let broken = false
  const email = `journey.${Date.now()}@example.com`
  const password = "a long journey password"
  const hostname = "web-browser"
  let rootPassword = ""
  let vpsOrderPath = ""

  /** Runs one step of the journey; skipped when an earlier one failed. */
  const step = (name: string, body: () => Promise<void>, timeout = 30_000) =>
    it(name, async (ctx: TestContext) => {
      if (broken) ctx.skip()
      try {
        await body()
      } catch (e) {
        broken = true
        throw e
      }
    }, timeout)

  step("registers a personal account", async () => {
    page = await chromium.newPage()
    await page.goto("/register")
    await byTestId(page, "register-type-personal").check()
    await expect.poll(() => byTestId(page, "register-siret").isVisible()).toBe(false)
    await byTestId(page, "register-first-name").fill("Ada")
    await byTestId(page, "register-last-name").fill("Lovelace")
    await byTestId(page, "register-email").fill(email)
    await byTestId(page, "register-password").fill(password)
    await byTestId(page, "register-submit").click()
    await byTestId(page, "register-success").waitFor()
    expect(await byTestId(page, "register-success").getAttribute("data-company")).toBeNull()
    await byTestId(page, "register-login-link").click()
    await page.waitForURL("**/login")
  })

  step("logs in and lands on the dashboard", async () => {
    await byTestId(page, "login-email").fill(email)
    await byTestId(page, "login-password").fill(password)
    await byTestId(page, "login-submit").click()
    await byTestId(page, "dashboard-hello").waitFor()
    expect(await byTestId(page, "dashboard-hello").textContent()).toContain("Ada")
    expect(await pageFetchStatus(page, "/api/auth/me")).toBe(200)
  })

  /** The panel sends the customer to the sandbox Stripe's hosted page; paid with the test card, it sends them back. */
  const payOnCheckoutPage = async () => {
    await page.waitForURL(/\/c\/pay\/cs_test_/)
    await page.locator("#card").fill("4242424242424242")
    await page.locator("#exp").fill("12/34")
    await page.locator("#cvc").fill("123")
    await page.locator("button[type=submit]").click()
    await page.waitForURL(/\/orders\/[^/]+$/)
  }

  step("orders a VPS: plan, template, host name and an SSH key; billing details first, then on to the payment", async () => {
    await byTestId(page, "nav-order").click()
    await byTestId(page, "plans-vps").waitFor()
    // A consumer sees the price including VAT (VPS S: 5,00 € excluding VAT, French VAT 20 %), and that it is.
    expect(await byTestId(page, "plan-price-vps-s").textContent()).toBe("€6.00 incl. VAT / month")
    await byTestId(page, "plan-choose-vps-s").click()
    await byTestId(page, "order-form").waitFor()
    const button = (await byTestId(page, "order-pay").textContent()) ?? ""
    expect(button).toBe("Pay €6.00 and order")
    const buttonCents = Math.round(Number(/€([\d.]+)/.exec(button)?.[1]) * 100)
    const paidBefore = (await server.runtime.runPromise(stripePayments)).length
    await byTestId(page, "order-template").selectOption("debian-12")
    await byTestId(page, "order-hostname").fill(hostname)
    await byTestId(page, "order-ssh-key").fill(ed25519PublicKey("ada@browser"))
    // A consumer's express request to start now: unticked, and the order is not sent without it.
    const expressStart = byTestId(page, "order-express-start")
    expect(await expressStart.isChecked()).toBe(false)
    expect(await seriousViolations(page)).toEqual([])
    await byTestId(page, "order-pay").click()
    expect(await expressStart.evaluate((box) => (box as HTMLInputElement).validity.valueMissing)).toBe(true)
    expect(new URL(page.url()).pathname).toBe("/order/vps-s")
    await expressStart.check()
    await byTestId(page, "order-pay").click()
    // No billing details yet: the order page asks for them (prefilled with the account's name) and says why.
    await byTestId(page, "order-billing").waitFor()
    expect(await byTestId(page, "order-error").textContent()).toBe("Fill in your billing details before ordering.")
    expect(await byTestId(page, "billing-name").inputValue()).toBe("Ada Lovelace")
    await byTestId(page, "billing-line1").fill("1 rue de la Paix")
    await byTestId(page, "billing-postcode").fill("75002")
    await byTestId(page, "billing-city").fill("Paris")
    await byTestId(page, "billing-country").fill("FR")
    await byTestId(page, "billing-save").click()
    // Saved, the same order goes on to the provider's page by itself.
    await payOnCheckoutPage()
    vpsOrderPath = new URL(page.url()).pathname
    // What the button said is what the gateway took, to the cent.
    await expect.poll(async () => (await server.runtime.runPromise(stripePayments)).slice(paidBefore).map((p) => p.amount))
      .toEqual([buttonCents])
  })

  step("follows the progress to completion over named steps and shows the root password once", async () => {
    const status = byTestId(page, "order-status")
    await expect.poll(() => status.getAttribute("data-status"), { timeout: 20_000 }).toBe("completed")
    await byTestId(page, "order-completed").waitFor()
    const steps = byTestId(page, "order-steps").locator("li")
    expect(await steps.allTextContents()).toEqual([
      "Choosing a node",
      "Cloning the OS template",
      "Sizing the disk",
      "Assigning a public address",
      "Configuring CPU, memory, network and cloud-init",
      "Starting the server"
    ])
    expect(new Set(await steps.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-state"))))).toEqual(new Set(["done"]))
    const bar = byTestId(page, "order-progress")
    const [value, max] = await bar.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max])
    expect(value).toBe(max)
    // The step announced while it ran is not left behind for a screen reader to read as current.
    expect(await byTestId(page, "order-live").textContent()).toBe("")
    rootPassword = (await byTestId(page, "root-password").textContent()) ?? ""
    expect(rootPassword.length).toBeGreaterThanOrEqual(12)

    // Once: the same order page opened again no longer carries it.
    await page.reload()
    await expect.poll(() => byTestId(page, "order-status").getAttribute("data-status")).toBe("completed")
    await byTestId(page, "order-completed").waitFor()
    expect(await byTestId(page, "root-password").count()).toBe(0)
    expect(new URL(page.url()).pathname).toBe(vpsOrderPath)
  })

  /** The signed-in customer's subscription of `kind`, as the API lists it. */
  const subscriptionOf = (kind: string) =>
    page.evaluate(async (wanted) => {
      const { subscriptions } = await (await fetch("/api/subscriptions")).json() as { subscriptions: Array<{ id: string; kind: string }> }
      return subscriptions.find((s) => s.kind === wanted)?.id ?? ""
    }, kind)

  step("opens the VPS page, running, with its address", async () => {
    await byTestId(page, "order-open-service").click()
    await page.waitForURL(/\/vps\/[^/]+$/)
    await expect.poll(() => byTestId(page, "vps-state").getAttribute("data-state")).toBe("running")
    expect(await byTestId(page, "vps-address").textContent()).toMatch(/^192\.0\.2\.\d+$/)
    // Its contract is reachable here too: cancel, and (a consumer, in time) withdraw.
    const subscription = await subscriptionOf("vps")
    await byTestId(page, "contract").waitFor()
    expect(await byTestId(page, `subscription-cancel-${subscription}`).textContent()).toBe("Cancel your contract")
    expect(await byTestId(page, `subscription-withdraw-${subscription}`).textContent()).toBe("Withdraw from this contract here")
  })

  step("the serial console connects by itself, shows the login prompt and takes the root password", async () => {
    const terminal = byTestId(page, "vps-terminal")
    await expect.poll(() => terminal.getAttribute("data-connected")).toBe("true")
    await terminal.locator(".xterm").click()
    await page.keyboard.press("Enter")
    await expectTerminalToShow(terminal, `${hostname} login:`)
    await page.keyboard.type("root")
    await page.keyboard.press("Enter")
    await expectTerminalToShow(terminal, "Password:")
    await page.keyboard.type(rootPassword)
    await page.keyboard.press("Enter")
    await expectTerminalToShow(terminal, `root@${hostname}:~#`)
  })

  step("orders a game server and opens its page", async () => {
    await byTestId(page, "nav-order").click()
    await byTestId(page, "plan-choose-mc-2g").click()
    await byTestId(page, "order-variable-MINECRAFT_VERSION").fill("1.21.1")
    await byTestId(page, "order-express-start").check()
    await byTestId(page, "order-pay").click()
    await payOnCheckoutPage()
    await expect.poll(() => byTestId(page, "order-status").getAttribute("data-status"), { timeout: 20_000 }).toBe("completed")
    expect(await byTestId(page, "order-steps").locator("li").allTextContents()).toContain("Installing the game")
    expect(await byTestId(page, "root-password").count()).toBe(0)
    await byTestId(page, "order-open-service").click()
    await page.waitForURL(/\/game\/[^/]+$/)
    expect(await byTestId(page, "game-state").getAttribute("data-state")).toBe("active")
    expect(await byTestId(page, "game-address").textContent()).toMatch(/^127\.0\.0\.1:\d+$/)
  })

  step("starts the server and answers a console command in the terminal", async () => {
    const terminal = byTestId(page, "game-terminal")
    await expect.poll(() => terminal.getAttribute("data-connected")).toBe("true")
    await byTestId(page, "game-power-start").click()
    await expect.poll(() => byTestId(page, "game-power-state").getAttribute("data-state")).toBe("running")
    await byTestId(page, "game-command").fill("say hello from chromium")
    await byTestId(page, "game-command").press("Enter")
    await expectTerminalToShow(terminal, "[Server] hello from chromium")
    expect(await byTestId(page, "game-command").inputValue()).toBe("")
  })

  step("uploads a file and downloads the same bytes", async () => {
    const bytes = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 31) % 251))
    await byTestId(page, "files-upload-input").setInputFiles({ name: "world.dat", mimeType: "application/octet-stream", buffer: bytes })
    await byTestId(page, "file-world.dat").waitFor()
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      byTestId(page, "file-download-world.dat").click()
    ])
    expect(download.suggestedFilename()).toBe("world.dat")
    const saved = await download.path()
    expect(Buffer.compare(await readFile(saved), bytes)).toBe(0)
  })

  step("creates a backup and sees it complete", async () => {
    await byTestId(page, "backup-name").fill("before the update")
    await byTestId(page, "backup-create").click()
    const row = byTestId(page, "backups-list").locator(`tr[data-backup-name="before the update"]`)
    await row.waitFor()
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 20_000 }).toBe("completed")
    expect(await row.locator(`[data-testid="backup-download"]`).isEnabled()).toBe(true)
  })

  step("withdraws from the game server's contract: the button, the confirmation step, then the state shown", async () => {
    const game = await subscriptionOf("game")
    // From the game server's own page: once withdrawn, the service is ending, and the customer is taken to the
    // dashboard, which shows the contract's end (not a page of a server being removed, with its parts failing).
    await page.goto("/")
    await byTestId(page, `subscription-${game}`).waitFor()
    await byTestId(page, "game-link").click()
    await byTestId(page, "game-files").waitFor()
    await byTestId(page, `subscription-withdraw-${game}`).click()
    const declaration = byTestId(page, "withdraw-declaration")
    await declaration.waitFor()
    expect(await declaration.textContent()).toContain(`I, Ada Lovelace, withdraw from the contract`)
    expect(await declaration.textContent()).toContain(game)
    expect(await byTestId(page, "confirm-ok").textContent()).toBe("Confirm the withdrawal")
    expect(await seriousViolations(page)).toEqual([])
    await byTestId(page, "confirm-ok").click()
    await page.waitForURL((url) => url.pathname === "/")
    await expect.poll(() => byTestId(page, `subscription-state-${game}`).getAttribute("data-state"), { timeout: 20_000 }).toBe("terminated")
    await byTestId(page, `subscription-withdrawn-${game}`).waitFor()
    expect(await byTestId(page, `subscription-withdraw-${game}`).count()).toBe(0)
  }, 60_000)

  step("cancels the VPS's contract: \"Cancel your contract\", the confirmation step, then the state shown", async () => {
    const vps = await subscriptionOf("vps")
    const cancel = byTestId(page, `subscription-cancel-${vps}`)
    expect(await cancel.textContent()).toBe("Cancel your contract")
    await cancel.click()
    await byTestId(page, "confirm-dialog").waitFor()
    await byTestId(page, "confirm-ok").click()
    await byTestId(page, `subscription-cancelled-${vps}`).waitFor()
    expect(await byTestId(page, `subscription-state-${vps}`).getAttribute("data-state")).toBe("active")
    expect(await byTestId(page, `subscription-cancel-${vps}`).isDisabled()).toBe(true)
  })

  step("logs out: back to the login page, the session gone", async () => {
    await byTestId(page, "logout").click()
    await page.waitForURL("**/login")
    await byTestId(page, "login-form").waitFor()
    expect(await pageFetchStatus(page, "/api/auth/me")).toBe(401)
    await page.goto("/")
    await page.waitForURL("**/login")
  })
})
