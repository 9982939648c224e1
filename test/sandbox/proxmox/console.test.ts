// Specification of the sandbox PVE's serial console (reference/proxmox.md §4): termproxy, the vncwebsocket upgrade with
// subprotocol `binary`, the auth line and `OK`, framed input, a login on the guest's getty, and every way it refuses.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { cloneVm, field, login, type Pve, startSandbox, tokenClient, type StartedSandbox } from "./pveHttp.ts"

let sandbox: StartedSandbox
let pve: Pve
let ticketCookie: string

const RUNNING = 700
const STOPPED = 701

beforeAll(async () => {
  sandbox = await startSandbox()
  pve = await login(sandbox.url)
  if (pve.credentials._tag !== "ticket") throw new Error("ticket expected")
  ticketCookie = `PVEAuthCookie=${encodeURIComponent(pve.credentials.ticket)}`
  for (const [vmid, name] of [[RUNNING, "box-1"], [STOPPED, "box-2"]] as const) {
    await cloneVm(pve, vmid, { name })
    const config = await pve.put(`/nodes/pve1/qemu/${vmid}/config`, { ciuser: "root", cipassword: "hunter2-long", serial0: "socket" })
    expect(config.status).toBe(200)
  }
  await pve.waitTask((await pve.post(`/nodes/pve1/qemu/${RUNNING}/status/start`)).data)
})
afterAll(() => sandbox.close())

interface Termproxy {
  readonly port: number
  readonly ticket: string
  readonly user: string
  readonly upid: string
}

const termproxy = async (client: Pve, vmid: number): Promise<Termproxy> => {
  const answer = await client.post(`/nodes/pve1/qemu/${vmid}/termproxy`)
  expect(answer.status, answer.text).toBe(200)
  return {
    port: Number(field(answer.data, "port")),
    ticket: String(field(answer.data, "ticket")),
    user: String(field(answer.data, "user")),
    upid: String(field(answer.data, "upid"))
  }
}

/** A console client that accumulates everything the server prints. */
class ConsoleClient {
  readonly ws: WebSocket
  output = ""
  readonly frameKinds: Array<boolean> = []
  closed = false
  readonly opened: Promise<void>

  constructor(vmid: number, proxy: Termproxy, headers: Record<string, string>, protocols: ReadonlyArray<string> = ["binary"]) {
    const url = `${sandbox.url.replace(/^http/, "ws")}/api2/json/nodes/pve1/qemu/${vmid}/vncwebsocket` +
      `?port=${proxy.port}&vncticket=${encodeURIComponent(proxy.ticket)}`
    this.ws = new WebSocket(url, [...protocols], { headers })
    this.ws.on("message", (data: Buffer, isBinary: boolean) => {
      this.frameKinds.push(isBinary)
      this.output += data.toString("utf8")
    })
    this.ws.on("close", () => {
      this.closed = true
    })
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve())
      this.ws.once("error", reject)
      this.ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode} ${res.statusMessage}`)))
    })
  }

  send(text: string) {
    this.ws.send(Buffer.from(text, "utf8"))
  }

  /** Types text with the `0:<len>:<data>` framing (len in UTF-8 bytes). */
  type(text: string) {
    this.send(`0:${Buffer.byteLength(text, "utf8")}:${text}`)
  }

  async waitFor(text: string, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.output.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(text)} in ${JSON.stringify(this.output)}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  async waitClosed(timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error(`still open; output ${JSON.stringify(this.output)}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }
}

/** A console on the running VM past the ticket handshake: the serial terminal has started. */
const signedOnConsole = async () => {
  const proxy = await termproxy(pve, RUNNING)
  const term = new ConsoleClient(RUNNING, proxy, { Cookie: ticketCookie })
  await term.opened
  term.send(`${proxy.user}:${proxy.ticket}\n`)
  await term.waitFor("starting serial terminal")
  return term
}

describe("a console login round trip", () => {
  it("goes from termproxy to a shell prompt and runs a command", async () => {
    const proxy = await termproxy(pve, RUNNING)
    expect(proxy.port).toBeGreaterThanOrEqual(5900)
    expect(proxy.port).toBeLessThanOrEqual(5999)
    expect(proxy.ticket).toMatch(/^PVEVNC:[0-9A-F]{8}::/)
    expect(proxy.user).toBe("root@pam")
    expect(proxy.upid).toMatch(new RegExp(`^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:vncproxy:${RUNNING}:root@pam:$`))

    const term = new ConsoleClient(RUNNING, proxy, { Cookie: ticketCookie })
    await term.opened
    expect(term.ws.protocol).toBe("binary")
    term.send(`${proxy.user}:${proxy.ticket}\n`)
    await term.waitFor("OK")
    await term.waitFor("starting serial terminal on interface serial0\r\n")
    expect(term.output.startsWith("OK")).toBe(true)
    expect(sandbox.control.consoleSessions()).toBe(1)

    term.type("\r")
    await term.waitFor("box-1 login: ")
    term.type("root")
    await term.waitFor("login: root")
    term.type("\r")
    await term.waitFor("Password: ")
    term.type("hunter2-long\r")
    await term.waitFor("root@box-1:~# ")
    expect(term.output).not.toContain("hunter2")

    term.send("1:132:43:")
    term.send("2")
    term.type("stty size\r")
    await term.waitFor("43 132\r\n")
    term.type("echo hi\r")
    await term.waitFor("echo hi\r\nhi\r\nroot@box-1:~# ")
    term.type("echo héllo wörld\r")
    await term.waitFor("\r\nhéllo wörld\r\n")
    expect(term.frameKinds.every((binary) => binary)).toBe(true)

    term.ws.close()
    await term.waitClosed()
    const deadline = Date.now() + 2000
    while (sandbox.control.consoleSessions() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(sandbox.control.consoleSessions()).toBe(0)
    expect((await pve.waitTask(proxy.upid)).exitstatus).toBe("OK")
  })

  it("finds the shell still logged in after reconnecting, like a real serial tty, until 'exit'", async () => {
    const term = await signedOnConsole()
    term.type("\r")
    await term.waitFor("root@box-1:~# ")
    term.type("exit\r")
    await term.waitFor("logout\r\n\r\nbox-1 login: ")
    term.ws.close()
  })

  it("refuses a wrong password with 'Login incorrect' and a new prompt", async () => {
    const term = await signedOnConsole()
    term.type("\r")
    term.type("root\r")
    await term.waitFor("Password: ")
    term.type("wrong\r")
    await term.waitFor("Login incorrect\r\nbox-1 login: ")
    term.ws.close()
  })

  it("accepts the password set through the guest agent", async () => {
    await pve.put(`/nodes/pve1/qemu/${RUNNING}/config`, { agent: 1 })
    const set = await pve.post(`/nodes/pve1/qemu/${RUNNING}/agent/set-user-password`, { username: "root", password: "agent-made-1" })
    expect(set.status).toBe(200)
    const term = await signedOnConsole()
    term.type("\r")
    term.type("root\ragent-made-1\r")
    await term.waitFor("root@box-1:~# ")
    term.type("whoami\r")
    await term.waitFor("whoami\r\nroot\r\n")
    term.type("exit\r")
    await term.waitFor("logout\r\n\r\nbox-1 login: ")
    term.ws.close()
  })
})

describe("console refusals", () => {
  it("closes right after the auth line when termproxy was called with an API token", async () => {
    const token = tokenClient(sandbox.url)
    const proxy = await termproxy(token, RUNNING)
    expect(proxy.user).toBe("root@pam!zh")
    const term = new ConsoleClient(RUNNING, proxy, { Authorization: "PVEAPIToken=root@pam!zh=9b1c2f7e-4a51-4e7d-9d0c-3f2a7e6b5c10" })
    await term.opened
    term.send(`${proxy.user}:${proxy.ticket}\n`)
    await term.waitClosed()
    expect(term.output).toBe("")
  })

  it("refuses the upgrade once the console ticket is older than 40 s", async () => {
    const proxy = await termproxy(pve, RUNNING)
    sandbox.control.advanceClock(41_000)
    const term = new ConsoleClient(RUNNING, proxy, { Cookie: ticketCookie })
    await expect(term.opened).rejects.toThrow("HTTP 500 permission denied - invalid PVEVNC ticket")
  })

  it("drops the connection when the client comes more than 10 s after termproxy", async () => {
    const proxy = await termproxy(pve, RUNNING)
    sandbox.control.advanceClock(11_000)
    const term = new ConsoleClient(RUNNING, proxy, { Cookie: ticketCookie })
    await expect(term.opened).rejects.toThrow()
    expect((await pve.waitTask(proxy.upid)).exitstatus).toBe("failed waiting for client: timed out")
  })

  it("refuses a console ticket presented by another user's session", async () => {
    const proxy = await termproxy(pve, RUNNING)
    const term = new ConsoleClient(RUNNING, proxy, { Authorization: "PVEAPIToken=root@pam!zh=9b1c2f7e-4a51-4e7d-9d0c-3f2a7e6b5c10" })
    await expect(term.opened).rejects.toThrow("HTTP 500")
  })

  it("requires authentication on the upgrade itself", async () => {
    const proxy = await termproxy(pve, RUNNING)
    const term = new ConsoleClient(RUNNING, proxy, {})
    await expect(term.opened).rejects.toThrow("HTTP 401 No ticket")
  })

  it("closes when the client did not offer the 'binary' subprotocol", async () => {
    const proxy = await termproxy(pve, RUNNING)
    const term = new ConsoleClient(RUNNING, proxy, { Cookie: ticketCookie }, [])
    await term.waitClosed()
    expect(term.output).toBe("")
  })

  it("says OK, then why the terminal cannot start, then closes for a stopped VM", async () => {
    const proxy = await termproxy(pve, STOPPED)
    const term = new ConsoleClient(STOPPED, proxy, { Cookie: ticketCookie })
    await term.opened
    term.send(`${proxy.user}:${proxy.ticket}\n`)
    await term.waitClosed()
    expect(term.output).toBe(`OKVM ${STOPPED} not running\r\n`)
  })

  it("drops a frame larger than 128 KiB", async () => {
    const term = await signedOnConsole()
    term.send("x".repeat(129 * 1024))
    await term.waitClosed()
  })
})
