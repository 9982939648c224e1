// Turning a VPS off, end to end: `shutdown` asks the guest (ACPI) and waits for it within a timeout the customer may
// choose; a guest that ignores it stays running and the answer says so (409 SHUTDOWN_TIMED_OUT), after which `stop`,
// the hard power-off, forces it. The guest that ignores ACPI is the lab cluster's, with the fault injected there.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addLabCluster, LAB, type LabSandbox } from "../support/labCluster.ts"
import { startTestServer } from "../support/testServer.ts"
import {
  allOf,
  Envelopes,
  errorCode,
  expectBody,
  leakScanner,
  type LeakScanner,
  provisionedVps,
  type ScannedBrowser,
  scannerFor,
  signedInCustomer,
  type TestServer,
  upstreamMarkers,
  vpsStatus
} from "../support/vpsHttp.ts"

let server: TestServer
let lab: LabSandbox
let scan: LeakScanner

beforeAll(async () => {
  server = await startTestServer()
  lab = await addLabCluster(server)
  scan = allOf(await leakScanner(server), scannerFor(upstreamMarkers(lab.url)))
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await lab?.close()
})

const shutdown = (browser: ScannedBrowser, vpsId: string, body?: unknown) =>
  browser.request("POST", `/api/vps/${vpsId}/shutdown`, body === undefined ? {} : { json: body })

describe("shutting a VPS down", () => {
  it("is graceful, with the default timeout or a chosen one, and leaves the VPS stopped", async () => {
    const browser = await signedInCustomer(server, scan)
    const { vpsId } = await provisionedVps(browser, "web-1")
    expect(expectBody(await shutdown(browser, vpsId), 200, Envelopes.vps).vps.status).toBe("stopped")
    expect(await vpsStatus(browser, vpsId)).toBe("stopped")
    // Already off: nothing to do, as for a stop.
    expect(expectBody(await shutdown(browser, vpsId, { timeoutSeconds: 30 }), 200, Envelopes.vps).vps.status).toBe("stopped")
    expect(expectBody(await browser.post(`/api/vps/${vpsId}/start`), 200, Envelopes.vps).vps.status).toBe("running")
    expect(expectBody(await shutdown(browser, vpsId, { timeoutSeconds: 30 }), 200, Envelopes.vps).vps.status).toBe("stopped")
  })

  it("refuses a timeout out of range or not a whole number of seconds, and does nothing", async () => {
    const browser = await signedInCustomer(server, scan)
    const { vpsId } = await provisionedVps(browser, "web-1")
    for (const timeoutSeconds of [0, 4, 301, 12.5, "60", null]) {
      const reply = await shutdown(browser, vpsId, { timeoutSeconds })
      expect(reply.status, `${JSON.stringify(timeoutSeconds)}: ${reply.text}`).toBe(400)
    }
    expect(await vpsStatus(browser, vpsId)).toBe("running")
  })

  it("a guest that ignores it stays running: 409 SHUTDOWN_TIMED_OUT; stop then forces it off", async () => {
    const browser = await signedInCustomer(server, scan)
    const { vpsId, vps } = await provisionedVps(browser, "stubborn", { planId: LAB.plan, templateId: LAB.template })
    const vm = lab.control.state().vms.find((v) => v.name === "stubborn")
    expect(vm?.status, vps.address).toBe("running")
    const path = new RegExp(`/qemu/${vm?.vmid}/status/shutdown$`)
    lab.control.inject({ match: { method: "POST", path }, kind: { _tag: "taskFailure", exitStatus: "VM quit/powerdown failed - got timeout" } })

    const refused = await shutdown(browser, vpsId, { timeoutSeconds: 20 })
    expect(errorCode(refused, 409)).toBe("SHUTDOWN_TIMED_OUT")
    expect(refused.text).toContain("20 seconds")
    expect(await vpsStatus(browser, vpsId)).toBe("running")
    expect(lab.control.state().vms.find((v) => v.name === "stubborn")?.status).toBe("running")
    // The guest was asked with the customer's timeout, and never forced by us.
    const asked = lab.control.requests().filter((r) => r.method === "POST" && path.test(r.path))
    expect(asked.map((r) => [r.body["timeout"], r.body["forceStop"]])).toEqual([["20", undefined]])

    expect(expectBody(await browser.post(`/api/vps/${vpsId}/stop`), 200, Envelopes.vps).vps.status).toBe("stopped")
    expect(lab.control.state().vms.find((v) => v.name === "stubborn")?.status).toBe("stopped")
  })

  it("is documented in the OpenAPI document, and stop as the hard power-off", async () => {
    const browser = await signedInCustomer(server, scan)
    const openapi = JSON.stringify((await browser.get("/openapi.json")).body)
    expect(openapi).toContain("/api/vps/{id}/shutdown")
    expect(openapi).toContain("Graceful: the guest is asked to power off")
    expect(openapi).toContain("Hard power-off (the plug pulled)")
  })

  it("another customer cannot shut the owner's VPS down: 404", async () => {
    const owner = await signedInCustomer(server, scan, "owner")
    const intruder = await signedInCustomer(server, scan, "intruder")
    const { vpsId } = await provisionedVps(owner, "web-1")
    expect(errorCode(await shutdown(intruder, vpsId), 404)).toBe("VPS_NOT_FOUND")
    expect(await vpsStatus(owner, vpsId)).toBe("running")
  })
})
