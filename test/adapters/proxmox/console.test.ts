// The serial console through the Proxmox wrapper, against a scripted termproxy on loopback: termproxy with a ticket
// session, the vncwebsocket handshake (cookie, port, encoded vncticket, `binary`), the auth line and `OK`, the
// input/resize/keep-alive framing, and closing in both directions (reference/proxmox.md §4).
import { X509Certificate } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Schedule, type Scope, Stream } from "effect"
import type { RawData, WebSocket } from "ws"
import type { ProxmoxCluster } from "../../../ports/ProxmoxClusters.ts"
import { type SerialConsole, Virtualization } from "../../../ports/Virtualization.ts"
import { adapterLayer, clusterAt, fixtureCert, makeStub, type Stub, tokenAuth } from "./stubPve.ts"

const vm = { cluster: "c1", node: "pve1", vmid: 101 }
const termproxyKey = "POST /nodes/pve1/qemu/101/termproxy"
const statusKey = "GET /nodes/pve1/qemu/101/status/current"
const vncTicket = "PVEVNC:6650A1B2::c2lnbmF0dXJl+/w=="

const text = (data: RawData) => (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data)).toString("utf8")

/** A running VM, its termproxy answering as `user`, and a console that greets after OK and records what it receives. */
const scriptConsole = (stub: Stub, user: string, greet: (socket: WebSocket) => void) => {
  const received: Array<string> = []
  const events: Array<string> = []
  stub.route(statusKey, () => ({ data: { status: "running", agent: 1 } }))
  stub.route(termproxyKey, () => ({ data: { port: "5901", ticket: vncTicket, user, upid: stub.task({ type: "vncproxy" }) } }))
  stub.onConsole(({ socket }) => {
    socket.on("close", () => events.push("closed"))
    socket.on("message", (data) => {
      const message = text(data)
      if (received.length === 0) {
        received.push(message)
        if (message === `${user}:${vncTicket}\n`) greet(socket)
        else socket.close()
        return
      }
      received.push(message)
    })
  })
  return { received, events }
}

/** Polls `condition` every 10 ms for up to 2 s. */
const eventually = (condition: () => boolean) =>
  Effect.suspend(() => (condition() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry({ times: 200, schedule: Schedule.spaced("10 millis") }),
    Effect.orDie
  )

const withConsole = <A, E>(
  cluster: ProxmoxCluster,
  f: (terminal: SerialConsole) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.flatMap(Virtualization, (v) => Effect.scoped(Effect.flatMap(v.openConsole(vm), f))).pipe(
    Effect.provide(adapterLayer(cluster, { consoleKeepAlive: "60 millis" }))
  )

const collect = (terminal: SerialConsole, into: { value: string }) =>
  Stream.runForEach(Stream.decodeText(terminal.output), (chunk) => Effect.sync(() => (into.value += chunk)))

describe("openConsole", () => {
  it.live("opens termproxy and the vncwebsocket, authenticates, relays output and frames input", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      const script = scriptConsole(stub, "root@pam", (socket) => {
        socket.send(Buffer.from("OKstarting serial terminal on interface serial0\r\n"))
        socket.send(Buffer.from("login: "))
      })
      const output = { value: "" }
      yield* withConsole(clusterAt(stub.url), (terminal) =>
        Effect.gen(function*() {
          yield* Effect.forkScoped(collect(terminal, output))
          yield* eventually(() => output.value.includes("login: "))
          assert.strictEqual(output.value, "starting serial terminal on interface serial0\r\nlogin: ")
          yield* terminal.write(new TextEncoder().encode("root\n"))
          yield* terminal.write(new TextEncoder().encode("é"))
          yield* terminal.resize(120, 40)
          yield* eventually(() => script.received.includes("2"))
        }))
      assert.deepStrictEqual(script.received.slice(0, 4), [`root@pam:${vncTicket}\n`, "0:5:root\n", "0:2:é", "1:120:40:"])
      yield* eventually(() => script.events.includes("closed"))

      const [termproxy] = stub.calls(termproxyKey)
      assert.isDefined(termproxy?.headers.csrfpreventiontoken)
      const upgrade = stub.seen.find((s) => s.method === "WS")
      assert.strictEqual(upgrade?.path, "/nodes/pve1/qemu/101/vncwebsocket")
      assert.strictEqual(upgrade?.query.get("port"), "5901")
      assert.strictEqual(upgrade?.query.get("vncticket"), vncTicket)
      assert.include(upgrade?.headers["sec-websocket-protocol"] ?? "", "binary")
      assert.strictEqual(upgrade?.headers.cookie, termproxy?.headers.cookie)
    }).pipe(Effect.scoped))

  it.live("over TLS the WebSocket trusts the pinned certificate exactly as the API calls do", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub({ tls: true })
      scriptConsole(stub, "root@pam", (socket) => socket.send(Buffer.from("OK# ")))
      const fingerprint = new X509Certificate(fixtureCert).fingerprint256
      const output = { value: "" }
      yield* withConsole(clusterAt(stub.url, { tls: { ca: null, fingerprint, insecure: false } }), (terminal) =>
        Effect.gen(function*() {
          yield* Effect.forkScoped(collect(terminal, output))
          yield* eventually(() => output.value === "# ")
        }))
      assert.isDefined(stub.seen.find((s) => s.method === "WS"))
    }).pipe(Effect.scoped))

  it.live("a burst of output frames reaches the reader complete and in order, however it is chunked", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}\r\n`)
      scriptConsole(stub, "root@pam", (socket) => {
        socket.send(Buffer.from("OK"))
        for (const line of lines) socket.send(Buffer.from(line))
      })
      const output = { value: "" }
      yield* withConsole(clusterAt(stub.url), (terminal) =>
        Effect.gen(function*() {
          yield* Effect.forkScoped(collect(terminal, output))
          yield* eventually(() => output.value.length >= lines.join("").length)
        }))
      assert.strictEqual(output.value, lines.join(""))
    }).pipe(Effect.scoped))

  it.live("input written together leaves as separate termproxy frames, in order", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      const script = scriptConsole(stub, "root@pam", (socket) => socket.send(Buffer.from("OK")))
      yield* withConsole(clusterAt(stub.url), (terminal) =>
        Effect.gen(function*() {
          const encoder = new TextEncoder()
          yield* Effect.all([terminal.write(encoder.encode("a")), terminal.resize(80, 24), terminal.write(encoder.encode("bc"))])
          yield* eventually(() => script.received.length >= 4)
        }))
      assert.deepStrictEqual(script.received.slice(1, 4), ["0:1:a", "1:80:24:", "0:2:bc"])
    }).pipe(Effect.scoped))

  it.live("accepts an OK split over two frames", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      scriptConsole(stub, "root@pam", (socket) => {
        socket.send(Buffer.from("O"))
        setTimeout(() => socket.send(Buffer.from("K$ ")), 20)
      })
      const output = { value: "" }
      yield* withConsole(clusterAt(stub.url), (terminal) =>
        Effect.gen(function*() {
          yield* Effect.forkScoped(collect(terminal, output))
          yield* eventually(() => output.value === "$ ")
        }))
    }).pipe(Effect.scoped))

  it.live("ends the output with ConsoleClosed when the upstream closes, and refuses writes after", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      scriptConsole(stub, "root@pam", (socket) => {
        socket.send(Buffer.from("OKbye\r\n"))
        setTimeout(() => socket.close(), 30)
      })
      yield* withConsole(clusterAt(stub.url), (terminal) =>
        Effect.gen(function*() {
          const output = { value: "" }
          const reading = yield* Effect.forkScoped(collect(terminal, output))
          const exit = yield* Fiber.await(reading)
          assert.strictEqual(output.value, "bye\r\n")
          assert.isTrue(Exit.isFailure(exit))
          assert.strictEqual(Exit.isFailure(exit) ? JSON.stringify(exit.cause).includes("ConsoleClosed") : false, true)
          assert.strictEqual((yield* Effect.flip(terminal.write(new Uint8Array([0x61]))))._tag, "ConsoleClosed")
        }))
    }).pipe(Effect.scoped))

  it.live("a console that refuses the ticket is ConsoleClosed", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      scriptConsole(stub, "someone@pve", () => undefined)
      stub.route(termproxyKey, () => ({ data: { port: 5901, ticket: vncTicket, user: "root@pam" } }))
      stub.onConsole(({ socket }) => socket.on("message", () => socket.send(Buffer.from("NO"))))
      const error = yield* Effect.flip(withConsole(clusterAt(stub.url), () => Effect.void))
      assert.strictEqual(error._tag, "ConsoleClosed")
    }).pipe(Effect.scoped))

  it.live("with an API token and no console login it fails ConsoleClosed and asks nothing", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      const error = yield* Effect.flip(withConsole(clusterAt(stub.url, { auth: tokenAuth(false) }), () => Effect.void))
      assert.strictEqual(error._tag, "ConsoleClosed")
      assert.include(error._tag === "ConsoleClosed" ? error.reason : "", "console login")
      assert.strictEqual(stub.seen.length, 0)
    }).pipe(Effect.scoped))

  it.live("with an API token it signs the console in with the console login's ticket", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      scriptConsole(stub, "console@pve", (socket) => socket.send(Buffer.from("OK")))
      yield* withConsole(clusterAt(stub.url, { auth: tokenAuth(true) }), () => Effect.void)
      assert.deepStrictEqual(stub.logins.map((l) => l.username), ["console@pve"])
      const [termproxy] = stub.calls(termproxyKey)
      assert.isUndefined(termproxy?.headers.authorization)
      assert.match(termproxy?.headers.cookie ?? "", /^PVEAuthCookie=PVE%3Aconsole%40pve/)
    }).pipe(Effect.scoped))

  it.live("a missing VM is VmNotFound", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      stub.route(statusKey, () => ({ status: 500, message: "Configuration file 'nodes/pve1/qemu-server/101.conf' does not exist" }))
      const error = yield* Effect.flip(withConsole(clusterAt(stub.url), () => Effect.void))
      assert.strictEqual(error._tag, "VmNotFound")
    }).pipe(Effect.scoped))

  // PVE hands out a termproxy for a stopped VM and fails only once the socket is open (§4.1).
  it.live("a stopped VM is ConsoleClosed before termproxy or the WebSocket is asked", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      scriptConsole(stub, "root@pam", (socket) => socket.send(Buffer.from("OK")))
      stub.route(statusKey, () => ({ data: { status: "stopped", agent: 1 } }))
      const error = yield* Effect.flip(withConsole(clusterAt(stub.url), () => Effect.void))
      assert.strictEqual(error._tag, "ConsoleClosed")
      assert.strictEqual(stub.calls(termproxyKey).length, 0)
      assert.isUndefined(stub.seen.find((s) => s.method === "WS"))
    }).pipe(Effect.scoped))
})
