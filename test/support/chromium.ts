// What the browser end-to-end tests share: the built panel (a vitest globalSetup), Debian's Chromium driven by
// playwright-core (never a downloaded browser), pages that record every request leaving the test server, and a
// screenshot of each open page under test/artifacts/ when a test fails.
import { existsSync, mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, expect, inject, type TestContext } from "vitest"
import type { TestProject } from "vitest/node"
import { buildPanel } from "../../app/buildPanel.ts"

export const CHROMIUM = "/usr/bin/chromium"

/** The id of Chromium's built-in PDF viewer extension. */
const PDF_VIEWER = "mhjfbmdgcfjbbpaeojofohoefgiehjai"
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts")
/** Bounds every click, fill and wait, so a missing element fails the step instead of the test's own timeout. */
const ACTION_TIMEOUT_MS = 15_000

declare module "vitest" {
  interface ProvidedContext {
    /** Why the panel could not be built before the run (null when it was, or was already current). */
    readonly panelBuildError: string | null
  }
}

/**
 * vitest globalSetup: builds app/web/dist when it is missing or older than its sources (a fresh clone has none).
 * A failed build fails the browser tests, with its reason, not the whole run.
 */
export const setup = async (project: TestProject): Promise<void> => {
  try {
    await buildPanel({ quiet: true })
    project.provide("panelBuildError", null)
  } catch (e) {
    project.provide("panelBuildError", e instanceof Error ? e.message : String(e))
  }
}

const launch = (): Promise<Browser> => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium); .ci/run does it`)
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-background-networking"]
  })
}

/** A file-system-safe name for a test's artifacts. */
const sanitize = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 120) || "test"

const testName = (ctx: TestContext) => {
  const parts: Array<string> = [ctx.task.name]
  for (let suite = ctx.task.suite; suite !== undefined && suite.name !== ""; suite = suite.suite) parts.unshift(suite.name)
  return parts.join(" ")
}

export interface ChromiumSession {
  /** A page in a fresh browser context (its own cookies), English and light by default, on the test server. */
  newPage(options?: { readonly locale?: string }): Promise<Page>
}

/**
 * Registers the hooks of a browser test file: Chromium for the file, and after each test a screenshot of every open
 * page if it failed, and a failure if any page sent a request (HTTP or WebSocket) to a host other than the server.
 * (The panel's Content-Security-Policy already stops most such requests before they leave; a navigation does not.)
 */
export const useChromium = (
  serverUrl: () => string,
  options: {
    /** Keep the pages open from one test to the next (a journey told in steps); otherwise closed after each test. */
    readonly keepPages?: boolean
    /** Other origins the pages may reach (the sandbox Stripe's hosted checkout page, where the panel sends a payment). */
    readonly otherOrigins?: () => ReadonlyArray<string>
  } = {}
): ChromiumSession => {
  let browser: Browser | undefined
  const contexts: Array<BrowserContext> = []
  const foreign: Array<string> = []

  const check = (url: string) => {
    const parsed = new URL(url)
    if (["data:", "blob:", "about:"].includes(parsed.protocol)) return
    // Chromium's built-in PDF viewer (an invoice opened in the browser) loads its own files; none leaves the machine.
    if (parsed.href.startsWith(`chrome-extension://${PDF_VIEWER}/`) || (parsed.protocol === "chrome:" && parsed.host === "resources")) return
    const hosts = [serverUrl(), ...(options.otherOrigins?.() ?? [])].map((origin) => new URL(origin).host)
    if (!["http:", "ws:"].includes(parsed.protocol) || !hosts.includes(parsed.host)) foreign.push(url)
  }

  beforeAll(async () => {
    const buildError = inject("panelBuildError")
    if (buildError !== null) throw new Error(`the panel (app/web) could not be built: ${buildError}`)
    browser = await launch()
  }, 60_000)

  afterEach(async (ctx) => {
    const pages = contexts.flatMap((c) => c.pages())
    const leaked = foreign.splice(0)
    if (ctx.task.result?.state === "fail" || leaked.length > 0) {
      mkdirSync(ARTIFACTS, { recursive: true })
      const name = sanitize(testName(ctx))
      for (const [i, page] of pages.entries()) {
        await page.screenshot({ path: join(ARTIFACTS, `${name}${pages.length > 1 ? `-${i + 1}` : ""}.png`), fullPage: true, timeout: 10_000 })
          .catch(() => undefined)
      }
    }
    if (!options.keepPages) await Promise.all(contexts.splice(0).map((c) => c.close()))
    expect(leaked, "requests to a host other than the test server").toEqual([])
  }, 30_000)

  afterAll(async () => {
    await browser?.close()
  }, 30_000)

  return {
    async newPage(options = {}) {
      if (browser === undefined) throw new Error("Chromium is not running (useChromium's beforeAll failed)")
      const context = await browser.newContext({
        baseURL: serverUrl(),
        locale: options.locale ?? "en-US",
        colorScheme: "light",
        viewport: { width: 1280, height: 900 },
        acceptDownloads: true
      })
      context.setDefaultTimeout(ACTION_TIMEOUT_MS)
      context.on("request", (request) => check(request.url()))
      context.on("page", (page) => page.on("websocket", (socket) => check(socket.url())))
      contexts.push(context)
      return context.newPage()
    }
  }
}

/** The element with this data-testid. */
export const byTestId = (page: Page | Locator, testid: string): Locator => page.locator(`[data-testid="${testid}"]`)

/** Signs in on the panel's own sign-in page, and waits for the dashboard. */
export const signInOnPage = async (page: Page, email: string, password: string) => {
  await page.goto("/login")
  await byTestId(page, "login-email").fill(email)
  await byTestId(page, "login-password").fill(password)
  await byTestId(page, "login-submit").click()
  await byTestId(page, "dashboard-hello").waitFor()
}

/** The text an xterm.js terminal shows (its DOM renderer's rows), with non-breaking spaces made plain. */
export const terminalText = async (terminal: Locator): Promise<string> =>
  ((await terminal.locator(".xterm-rows").textContent()) ?? "").replace(/\u00a0/g, " ")

/** Waits until the terminal shows `text` (bounded by the poll's timeout). */
export const expectTerminalToShow = (terminal: Locator, text: string, timeout = ACTION_TIMEOUT_MS) =>
  expect.poll(() => terminalText(terminal), { timeout, message: `the terminal to show ${JSON.stringify(text)}` }).toContain(text)

/** The status of a same-origin fetch made by the page itself (its cookies, its origin). */
export const pageFetchStatus = (page: Page, path: string): Promise<number> =>
  page.evaluate(async (p) => (await fetch(p, { credentials: "same-origin" })).status, path)
