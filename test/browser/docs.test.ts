// The API reference page (/docs, Scalar bundled into the page) under its Content-Security-Policy, in Chromium: it
// renders the API's title and its operations, and the browser reports no violation of the policy but one: the
// bundled schema library (Zod) probes once whether `new Function("")` is allowed and, refused, takes its path
// without eval — which the policy keeps blocked on purpose. Nothing is fetched from anywhere but the server.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { useChromium } from "../support/chromium.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>

beforeAll(async () => {
  server = await startSelfAddressedTestServer()
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

const chromium = useChromium(() => server.url)

/** What Chromium reports of an empty `new Function("")` (the policy has 'report-sample', so the code is shown). */
const EVAL_PROBE = { directive: "script-src", blocked: "eval", sample: "(function anonymous(\n) {\n\n})" }

const MARK = "csp-violation:"

describe("the API reference page", () => {
  it("renders under its Content-Security-Policy; the only violation is the eval probe, and it changes nothing", async () => {
    const page = await chromium.newPage()
    const violations: Array<unknown> = []
    const refusals: Array<string> = []
    page.on("console", (message) => {
      const text = message.text()
      if (text.startsWith(MARK)) violations.push(JSON.parse(text.slice(MARK.length)))
      else if (/content security policy/i.test(text)) refusals.push(text)
    })
    // Every violation the page sees (a blocked script, style, image, connection or eval), reported to the test.
    await page.addInitScript((mark) => {
      document.addEventListener("securitypolicyviolation", (e) => {
        console.log(mark + JSON.stringify({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample }))
      })
    }, MARK)
    const response = await page.goto("/docs")
    expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'sha256-[^;]*'report-sample'/)
    await page.getByText("ZH hosting platform API").first().waitFor()
    await page.getByText("/api/auth/login").first().waitFor()
    // Scalar keeps working after the first paint (its sidebar, its request client): late violations show too.
    await page.getByText("Accounts").first().click()
    await page.getByText("/api/auth/register").first().waitFor()
    await page.waitForTimeout(500)
    expect(refusals).toEqual([])
    expect(violations.filter((v) => JSON.stringify(v) !== JSON.stringify(EVAL_PROBE))).toEqual([])
  }, 60_000)
})
