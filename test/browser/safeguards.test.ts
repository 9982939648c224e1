// Nothing lost in the panel, in Chromium: the file editor opens only text it can give back byte for byte (a binary,
// oversized or mixed-line-ending file is offered as a download and left untouched by anything clicked), and saves the
// exact bytes edited; a VPS is turned off by "Shut down" (graceful) by default, power-off and hard reset ask first,
// and a guest that ignores the shutdown is forced off only once the owner agrees; a console closed for input too fast
// says so.
import { readFile } from "node:fs/promises"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SandboxPterodactyl } from "../../adapters/pterodactyl/sandbox/SandboxPterodactyl.ts"
import { byTestId, useChromium } from "../support/chromium.ts"
import { provisionedGame, sandboxPanelOf } from "../support/gameHttp.ts"
import { addLabCluster, LAB, type LabSandbox } from "../support/labCluster.ts"
import { startSelfAddressedTestServer } from "../support/testServer.ts"
import { Envelopes, expectBody, leakScanner, provisionedVps, ScannedBrowser, vpsStatus } from "../support/vpsHttp.ts"
import { fillBillingProfile } from "../support/checkout.ts"

let server: Awaited<ReturnType<typeof startSelfAddressedTestServer>>
let panel: SandboxPterodactyl
let lab: LabSandbox
let api: ScannedBrowser
const customer = { email: `files.${Date.now()}@example.com`, password: "a files test password" }
let game: Awaited<ReturnType<typeof provisionedGame>>
let uuid: string

beforeAll(async () => {
  server = await startSelfAddressedTestServer({ sandboxTaskSpeed: "instant" })
  panel = await sandboxPanelOf(server)
  lab = await addLabCluster(server)
  api = new ScannedBrowser(server.url, await leakScanner(server))
  const registered = await api.post("/api/auth/register", {
    ...customer,
    accountType: "personal",
    firstName: "Grace",
    lastName: "Hopper",
    language: "en"
  })
  expect(registered.status, registered.text).toBe(201)
  expect((await api.post("/api/auth/login", { ...customer, rememberMe: false })).status).toBe(200)
  await fillBillingProfile(api)
  game = await provisionedGame(api)
  uuid = panel.control.servers().find((s) => s.identifier === game.gameServer.identifier)?.uuid ?? ""
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await lab?.close()
})

const chromium = useChromium(() => server.url)

const signedInPage = async () => {
  const page = await chromium.newPage()
  await page.goto("/login")
  await byTestId(page, "login-email").fill(customer.email)
  await byTestId(page, "login-password").fill(customer.password)
  await byTestId(page, "login-submit").click()
  await byTestId(page, "dashboard-hello").waitFor()
  return page
}

const filesPage = async () => {
  const page = await signedInPage()
  await page.goto(`/game/${game.gameServer.id}`)
  await byTestId(page, "files-list").locator("table").waitFor()
  return page
}

/** A JAR's head (a ZIP), NUL bytes and invalid UTF-8 throughout: 300,000 bytes as in the measured case. */
const jarBytes = () => {
  const out = Buffer.alloc(300_000)
  for (let i = 0; i < out.length; i++) out[i] = (i * 131 + 7) % 256
  Buffer.from([0x50, 0x4b, 0x03, 0x04]).copy(out, 0)
  return out
}

const contentsRequests = (name: string) =>
  panel.control.requests().filter((r) => r.path.endsWith("/files/contents") && (r.query["file"] ?? "").toString().endsWith(name)).length

describe("the file editor", () => {
  it("offers a binary file as a download, never the editor, and the file is byte-identical afterwards", async () => {
    const jar = jarBytes()
    // Also binary behind a text name (the listing says text/plain): caught from its bytes.
    const latin1 = Buffer.from("motd=Caf\xe9 de la gare\n", "latin1")
    panel.control.putFile(uuid, "/server.jar", jar)
    panel.control.putFile(uuid, "/legacy.txt", latin1)
    const page = await filesPage()

    await byTestId(page, "file-open-server.jar").click()
    await expect.poll(() => byTestId(page, "file-not-editable").getAttribute("data-reason")).toBe("binary")
    expect(await byTestId(page, "file-editor-content").count()).toBe(0)
    expect(contentsRequests("server.jar")).toBe(0)
    const [download] = await Promise.all([page.waitForEvent("download"), byTestId(page, "file-editor-download").click()])
    expect((await readFile(await download.path())).equals(jar)).toBe(true)
    await byTestId(page, "file-editor-close").click()

    await byTestId(page, "file-open-legacy.txt").click()
    await expect.poll(() => byTestId(page, "file-not-editable").getAttribute("data-reason")).toBe("binary")
    expect(await byTestId(page, "file-not-editable").textContent()).toBe("legacy.txt is not a text file: it cannot be edited here. Download it instead.")
    expect(await byTestId(page, "file-editor-content").count()).toBe(0)
    expect(await byTestId(page, "file-editor-save").count()).toBe(0)
    await byTestId(page, "file-editor-close").click()

    expect(panel.control.readFile(uuid, "/server.jar")?.equals(jar)).toBe(true)
    expect(panel.control.readFile(uuid, "/legacy.txt")?.equals(latin1)).toBe(true)
  })

  it("does not fetch a file over the editor's limit, and says why", async () => {
    panel.control.putFile(uuid, "/latest.log", { syntheticBytes: 5 * 1024 * 1024 })
    const page = await filesPage()
    await byTestId(page, "file-open-latest.log").click()
    await expect.poll(() => byTestId(page, "file-not-editable").getAttribute("data-reason")).toBe("tooLarge")
    expect(await byTestId(page, "file-not-editable").textContent()).toBe("latest.log is too large to edit here (5 MB; at most 4 MB). Download it instead.")
    expect(contentsRequests("latest.log")).toBe(0)
  })

  it("saves a text file byte for byte: untouched it is unchanged; edited it is exactly the text, in its own line endings", async () => {
    const original = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("motd=Café 🎮\r\nmax-players=12\r\n", "utf8")])
    panel.control.putFile(uuid, "/server.properties", original)
    const page = await filesPage()
    const content = byTestId(page, "file-editor-content")

    await byTestId(page, "file-open-server.properties").click()
    await expect.poll(() => content.inputValue()).toBe("\ufeffmotd=Café 🎮\nmax-players=12\n")
    await byTestId(page, "file-editor-save").click()
    await expect.poll(() => byTestId(page, "status").textContent()).toBe("Saved.")
    expect(panel.control.readFile(uuid, "/server.properties")?.equals(original)).toBe(true)

    await content.fill("\ufeffmotd=Été à Noël ✓\nmax-players=20\nwhite-list=true\n")
    await byTestId(page, "file-editor-save").click()
    await expect.poll(() => panel.control.readFile(uuid, "/server.properties")?.toString("hex"))
      .toBe(Buffer.from("\ufeffmotd=Été à Noël ✓\r\nmax-players=20\r\nwhite-list=true\r\n", "utf8").toString("hex"))
  })

  it("offers a file mixing line endings as a download: the textarea would change them", async () => {
    const mixed = Buffer.from("first\r\nsecond\nthird\r\n", "utf8")
    panel.control.putFile(uuid, "/mixed.txt", mixed)
    const page = await filesPage()
    await byTestId(page, "file-open-mixed.txt").click()
    await expect.poll(() => byTestId(page, "file-not-editable").getAttribute("data-reason")).toBe("mixedLineEndings")
    expect(panel.control.readFile(uuid, "/mixed.txt")?.equals(mixed)).toBe(true)
  })
})

describe("VPS power", () => {
  const vpsPage = async (vpsId: string) => {
    const page = await signedInPage()
    await page.goto(`/vps/${vpsId}`)
    await expect.poll(() => byTestId(page, "vps-state").getAttribute("data-state")).toBe("running")
    return page
  }
  const state = (page: Page) => byTestId(page, "vps-state").getAttribute("data-state")

  it("Shut down is the default; power-off and hard reset ask first, and cancelling does nothing", async () => {
    const { vpsId } = await provisionedVps(api, "power-1")
    const page = await vpsPage(vpsId)
    expect(await byTestId(page, "vps-shutdown").getAttribute("class")).toContain("primary")
    expect(await byTestId(page, "vps-stop").getAttribute("class")).not.toContain("primary")

    for (const [action, question] of [["vps-stop", "Power power-1 off at once?"], ["vps-reset", "Reset power-1 at once?"]] as const) {
      await byTestId(page, action).click()
      await byTestId(page, "confirm-dialog").waitFor()
      expect(await byTestId(page, "confirm-dialog").textContent()).toContain(question)
      await byTestId(page, "confirm-cancel").click()
      await expect.poll(() => byTestId(page, "confirm-dialog").count()).toBe(0)
    }
    expect(await vpsStatus(api, vpsId)).toBe("running")

    await byTestId(page, "vps-shutdown").click()
    await expect.poll(() => state(page)).toBe("stopped")
    expect(await byTestId(page, "confirm-dialog").count()).toBe(0)
    expect(await vpsStatus(api, vpsId)).toBe("stopped")

    await byTestId(page, "vps-start").click()
    await expect.poll(() => state(page)).toBe("running")
    await byTestId(page, "vps-stop").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => state(page)).toBe("stopped")
  })

  it("a guest that ignores the shutdown stays running until the owner agrees to power it off", async () => {
    const { vpsId } = await provisionedVps(api, "stubborn", { planId: LAB.plan, templateId: LAB.template })
    const vmid = lab.control.state().vms.find((v) => v.name === "stubborn")?.vmid
    const page = await vpsPage(vpsId)
    const fault = { match: { method: "POST", path: new RegExp(`/qemu/${vmid}/status/shutdown$`) }, kind: { _tag: "taskFailure", exitStatus: "VM quit/powerdown failed - got timeout" } } as const

    lab.control.inject(fault)
    await byTestId(page, "vps-shutdown").click()
    await byTestId(page, "confirm-dialog").waitFor()
    expect(await byTestId(page, "confirm-dialog").textContent()).toContain("stubborn did not shut down within 60 seconds and is still running.")
    await byTestId(page, "confirm-cancel").click()
    expect(await state(page)).toBe("running")
    expect(await vpsStatus(api, vpsId)).toBe("running")

    lab.control.inject(fault)
    await byTestId(page, "vps-shutdown").click()
    await byTestId(page, "confirm-ok").click()
    await expect.poll(() => state(page)).toBe("stopped")
    expect(lab.control.state().vms.find((v) => v.vmid === vmid)?.status).toBe("stopped")
    expect(expectBody(await api.get(`/api/vps/${vpsId}`), 200, Envelopes.vps).vps.status).toBe("stopped")
  })

  it("a console flooded with keys is closed, and the page says why", async () => {
    const { vpsId } = await provisionedVps(api, "typist")
    const page = await vpsPage(vpsId)
    const terminal = byTestId(page, "vps-terminal")
    await expect.poll(() => terminal.getAttribute("data-connected")).toBe("true")
    // One frame per key, as xterm.js sends them, far faster than anyone types.
    await page.keyboard.type("x".repeat(400))
    await expect.poll(() => terminal.getAttribute("data-connected")).toBe("false")
    expect(await byTestId(page, "vps-console-state").textContent()).toBe("The console closed: input arrived faster than a terminal takes it.")
  })
})
