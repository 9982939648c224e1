// The serial console through the Proxmox wrapper, against the simulated PVE's termproxy and guest getty (in memory, and
// on loopback for TLS): termproxy with a ticket session, the vncwebsocket handshake (cookie, port, encoded vncticket,
// `binary`), the auth line and `OK`, the input/resize framing, and closing (reference/proxmox.md §4).
import { X509Certificate } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted, Schedule, type Scope, Stream } from "effect"
import type { ProxmoxCluster } from "../../../ports/ProxmoxClusters.ts"
import { type SerialConsole, Virtualization } from "../../../ports/Virtualization.ts"
import {
  adapterLayer,
  apiPath,
  base,
  clusterAt,
  fixtureCert,
  inMemory,
  onLoopback,
  type Pve,
  placeAt,
  tokenAuth,
  user,
  vm
} from "./simulatedPve.ts"

const termproxyKey = `POST ${base}/termproxy`
const encoder = new TextEncoder()
const password = "Root-pass-1"

/** Polls `condition` every 10 ms for up to 2 s. */
const eventually = (condition: () => boolean) =>
  Effect.suspend(() => (condition() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry({ times: 200, schedule: Schedule.spaced("10 millis") }),
    Effect.orDie
  )

/** A VM with its serial port on a socket and the cloud-init password of root, started through the adapter. */
const consoleVm = (pve: Pve, options: { readonly start?: boolean } = {}) => {
  placeAt(pve, { config: { serial0: "socket", vga: "serial0", ciuser: "root", cipassword: password } })
  return options.start === false ? Effect.void : Effect.flatMap(Virtualization, (v) => v.start(vm))
}

type Prepare = (pve: Pve) => Effect.Effect<void, unknown, Virtualization>

/** A simulation in memory with `consoleVm` running (unless `prepare` says otherwise), and the adapter for `cluster`. */
const withSimulation = <A, E>(
  f: (v: Virtualization["Service"], pve: Pve) => Effect.Effect<A, E, Scope.Scope>,
  options: { readonly cluster?: Partial<ProxmoxCluster>; readonly prepare?: Prepare } = {}
) =>
  Effect.gen(function*() {
    const pve = yield* inMemory()
    const agents = pve.agents
    return yield* Effect.gen(function*() {
      yield* (options.prepare ?? consoleVm)(pve)
      return yield* Effect.flatMap(Virtualization, (v) => f(v, pve))
    }).pipe(Effect.provide(adapterLayer(clusterAt(pve.url, options.cluster), { consoleKeepAlive: "60 millis", connect: () => agents })))
  }).pipe(Effect.scoped)

const openConsole = <A, E>(v: Virtualization["Service"], f: (terminal: SerialConsole) => Effect.Effect<A, E, Scope.Scope>) =>
  Effect.scoped(Effect.flatMap(v.openConsole(vm), f))

const collect = (terminal: SerialConsole, into: { value: string }) =>
  Stream.runForEach(Stream.decodeText(terminal.output), (chunk) => Effect.sync(() => (into.value += chunk)))

/** Types `text` and waits until the output ends with `until`. */
const typing = (terminal: SerialConsole, output: { value: string }, text: string, until: string) =>
  Effect.andThen(terminal.write(encoder.encode(text)), eventually(() => output.value.endsWith(until)))

const signIn = (terminal: SerialConsole, output: { value: string }) =>
  Effect.gen(function*() {
    yield* typing(terminal, output, "\r", "web-1 login: ")
    yield* typing(terminal, output, "root\r", "Password: ")
    yield* typing(terminal, output, `${password}\r`, "root@web-1:~# ")
  })

describe("openConsole", () => {
  it.live("opens termproxy and the vncwebsocket, authenticates, relays output and frames input", () =>
    withSimulation((v, pve) =>
      Effect.gen(function*() {
        const output = { value: "" }
        yield* openConsole(v, (terminal) =>
          Effect.gen(function*() {
            yield* Effect.forkScoped(collect(terminal, output))
            yield* eventually(() => output.value === "starting serial terminal on interface serial0\r\n")
            yield* signIn(terminal, output)
            // The frame carries the byte length: two bytes of UTF-8 for one character.
            yield* typing(terminal, output, "echo é\r", "é\r\nroot@web-1:~# ")
            yield* terminal.resize(120, 40)
            yield* typing(terminal, output, "stty size\r", "40 120\r\nroot@web-1:~# ")
          }))
        // Closed by us with the scope.
        yield* eventually(() => pve.control.consoleSessions() === 0)

        const [termproxy] = pve.calls(termproxyKey)
        assert.isDefined(termproxy?.headers["csrfpreventiontoken"])
        const upgrade = pve.requests().find((r) => apiPath(r) === `${base}/vncwebsocket`)
        const vncproxy = pve.control.state().tasks.find((t) => t.type === "vncproxy")
        assert.strictEqual(upgrade?.query["port"], "5900")
        assert.match(String(upgrade?.query["vncticket"]), /^PVEVNC:/)
        assert.include(upgrade?.headers["sec-websocket-protocol"] ?? "", "binary")
        assert.strictEqual(upgrade?.headers["cookie"], termproxy?.headers["cookie"])
        // The vncproxy task ends with the connection.
        assert.deepInclude(vncproxy, { status: "stopped", exitstatus: "OK" })
      })))

  it.live("over TLS the WebSocket trusts the pinned certificate exactly as the API calls do", () =>
    Effect.gen(function*() {
      const pve = yield* onLoopback({ tls: true })
      const fingerprint = new X509Certificate(fixtureCert).fingerprint256
      const output = { value: "" }
      yield* Effect.gen(function*() {
        yield* consoleVm(pve)
        const v = yield* Virtualization
        yield* openConsole(v, (terminal) =>
          Effect.gen(function*() {
            yield* Effect.forkScoped(collect(terminal, output))
            yield* typing(terminal, output, "\r", "web-1 login: ")
          }))
      }).pipe(Effect.provide(adapterLayer(clusterAt(pve.url, { tls: { ca: null, fingerprint, insecure: false } }))))
      assert.isDefined(pve.requests().find((r) => apiPath(r) === `${base}/vncwebsocket`))
    }).pipe(Effect.scoped))

  it.live("a burst of output frames reaches the reader complete and in order, however it is chunked", () =>
    withSimulation((v) =>
      Effect.gen(function*() {
        const output = { value: "" }
        const lines = Array.from({ length: 500 }, (_, i) => `line ${i}`)
        yield* openConsole(v, (terminal) =>
          Effect.gen(function*() {
            yield* Effect.forkScoped(collect(terminal, output))
            yield* signIn(terminal, output)
            // One frame per command, each answered by its own output frame, none waited for.
            yield* Effect.forEach(lines, (line) => terminal.write(encoder.encode(`echo ${line}\r`)), { discard: true })
            yield* eventually(() => output.value.endsWith(`line 499\r\nroot@web-1:~# `))
          }))
        const session = output.value.slice(output.value.indexOf("echo line 0"))
        assert.strictEqual(session, lines.map((line) => `echo ${line}\r\n${line}\r\nroot@web-1:~# `).join(""))
      })))

  it.live("input written together leaves as separate termproxy frames, in order", () =>
    withSimulation((v) =>
      Effect.gen(function*() {
        const output = { value: "" }
        yield* openConsole(v, (terminal) =>
          Effect.gen(function*() {
            yield* Effect.forkScoped(collect(terminal, output))
            yield* signIn(terminal, output)
            // The resize reaches the tty between the two halves of the command, so `stty` reads the new size.
            yield* Effect.all([terminal.write(encoder.encode("stty")), terminal.resize(100, 30), terminal.write(encoder.encode(" size\r"))])
            yield* eventually(() => output.value.endsWith("stty size\r\n30 100\r\nroot@web-1:~# "))
          }))
      })))

  it.live("ends the output with ConsoleClosed when the upstream closes, and refuses writes after", () =>
    withSimulation((v) =>
      openConsole(v, (terminal) =>
        Effect.gen(function*() {
          const output = { value: "" }
          const reading = yield* Effect.forkScoped(collect(terminal, output))
          yield* eventually(() => output.value.endsWith("serial0\r\n"))
          // The VM stops: `qm terminal` exits and the socket closes (§4.1).
          yield* v.stop(vm)
          const exit = yield* Fiber.await(reading)
          assert.strictEqual(output.value, "starting serial terminal on interface serial0\r\n")
          assert.isTrue(Exit.isFailure(exit))
          assert.strictEqual(Exit.isFailure(exit) ? JSON.stringify(exit.cause).includes("ConsoleClosed") : false, true)
          assert.strictEqual((yield* Effect.flip(terminal.write(new Uint8Array([0x61]))))._tag, "ConsoleClosed")
        }))))

  it.live("a console whose WebSocket is refused is ConsoleClosed", () =>
    withSimulation(
      (v) => Effect.map(Effect.flip(openConsole(v, () => Effect.void)), (error) => assert.strictEqual(error._tag, "ConsoleClosed")),
      {
        prepare: (pve) =>
          Effect.andThen(consoleVm(pve), Effect.sync(() =>
            pve.control.inject({
              match: { path: /\/vncwebsocket$/ },
              kind: { _tag: "status", status: 500, message: "permission denied - invalid PVEVNC ticket" }
            })))
      }
    ))

  it.live("with an API token and no console login it fails ConsoleClosed and asks nothing", () =>
    withSimulation(
      (v, pve) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(openConsole(v, () => Effect.void))
          assert.strictEqual(error._tag, "ConsoleClosed")
          assert.include(error._tag === "ConsoleClosed" ? error.reason : "", "console login")
          assert.strictEqual(pve.requests().length, 0)
        }),
      { cluster: { auth: tokenAuth(false) }, prepare: (pve) => consoleVm(pve, { start: false }) }
    ))

  it.live("with an API token it signs the console in with the console login's ticket", () =>
    withSimulation(
      (v, pve) =>
        Effect.gen(function*() {
          const output = { value: "" }
          yield* openConsole(v, (terminal) =>
            Effect.gen(function*() {
              yield* Effect.forkScoped(collect(terminal, output))
              yield* typing(terminal, output, "\r", "web-1 login: ")
            }))
          assert.deepStrictEqual(pve.logins().map((l) => l.username), [user.username])
          const [termproxy] = pve.calls(termproxyKey)
          assert.isUndefined(termproxy?.headers["authorization"])
          assert.match(termproxy?.headers["cookie"] ?? "", /^PVEAuthCookie=PVE%3Aconsole%40pve/)
          // Every other call went with the token.
          for (const r of pve.calls().filter((r) => r !== termproxy && !apiPath(r).endsWith("/vncwebsocket"))) {
            assert.match(r.headers["authorization"] ?? "", /^PVEAPIToken=/)
          }
        }),
      { cluster: { auth: tokenAuth(true) } }
    ))

  it.live("a missing VM is VmNotFound", () =>
    withSimulation(
      (v) => Effect.map(Effect.flip(openConsole(v, () => Effect.void)), (error) => assert.strictEqual(error._tag, "VmNotFound")),
      { prepare: () => Effect.void }
    ))

  // PVE hands out a termproxy for a stopped VM and fails only once the socket is open (§4.1).
  it.live("a stopped VM is ConsoleClosed before termproxy or the WebSocket is asked", () =>
    withSimulation(
      (v, pve) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(openConsole(v, () => Effect.void))
          assert.strictEqual(error._tag, "ConsoleClosed")
          assert.strictEqual(pve.calls(termproxyKey).length, 0)
          assert.isUndefined(pve.requests().find((r) => apiPath(r).endsWith("/vncwebsocket")))
        }),
      { prepare: (pve) => consoleVm(pve, { start: false }) }
    ))
})
