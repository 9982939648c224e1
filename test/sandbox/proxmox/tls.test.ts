// The sandbox PVE serves HTTPS with a given certificate (the checked-in test fixture for 127.0.0.1), as pveproxy does
// on :8006, and plain HTTP without one.
import { request } from "node:https"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { sandboxProxmox } from "../../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { startScoped } from "../../support/startScoped.ts"
import { TOKEN } from "./pveHttp.ts"

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), "utf8")

const getJson = (url: string, ca: string, headers: Record<string, string>) =>
  new Promise<{ readonly status: number; readonly body: string; readonly authorized: boolean }>((resolve, reject) => {
    const req = request(url, { ca, headers }, (res) => {
      const socket: unknown = res.socket
      const authorized = typeof socket === "object" && socket !== null && "authorized" in socket && socket.authorized === true
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), authorized }))
    })
    req.on("error", reject)
    req.end()
  })

describe("TLS", () => {
  it("serves the API over HTTPS with the given certificate", async () => {
    const cert = fixture("sandbox-cert.pem")
    const sandbox = await startScoped(sandboxProxmox({ tls: { cert, key: fixture("sandbox-key.pem") }, tokens: [TOKEN] }))
    try {
      expect(sandbox.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const answer = await getJson(`${sandbox.url}/api2/json/version`, cert, {
        Authorization: `PVEAPIToken=${TOKEN.id}=${TOKEN.secret}`
      })
      expect(answer.status).toBe(200)
      expect(answer.authorized).toBe(true)
      expect(JSON.parse(answer.body)).toMatchObject({ data: { release: "9.0" } })
    } finally {
      await sandbox.close()
    }
  })

  it("refuses a client that does not trust the certificate", async () => {
    const sandbox = await startScoped(sandboxProxmox({ tls: { cert: fixture("sandbox-cert.pem"), key: fixture("sandbox-key.pem") } }))
    try {
      await expect(fetch(`${sandbox.url}/api2/json/version`)).rejects.toThrow()
    } finally {
      await sandbox.close()
    }
  })
})
