// How the Proxmox wrapper signs in and trusts a cluster, specified against a scripted PVE on loopback: tickets with
// CSRF tokens, renewal before expiry shared by concurrent callers, one re-login after a 401, API tokens, TLS trust
// (CA, fingerprint pin, insecure), and no credential in any error (reference/proxmox.md §1).
import { X509Certificate } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { type ProxmoxCluster } from "../../../ports/ProxmoxClusters.ts"
import { Virtualization } from "../../../ports/Virtualization.ts"
import {
  adapterLayer,
  clusterAt,
  fixtureCert,
  makeStub,
  type Stub,
  tokenAuth,
  tokenSecret,
  users
} from "./stubPve.ts"

const vm = { cluster: "c1", node: "pve1", vmid: 101 }

const running = { data: { status: "running", agent: 1, lock: "" } }

/** Runs `f` against one adapter instance built for `cluster`. */
const withAdapter = <A, E>(cluster: ProxmoxCluster, f: (v: Virtualization["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Virtualization, f).pipe(Effect.provide(adapterLayer(cluster)))

const statusCalls = (stub: Stub) => stub.calls("GET /nodes/pve1/qemu/101/status/current")

describe("ProxmoxSession", () => {
  it.live("signs in with a form-posted ticket request, and sends the CSRF token on writes only", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      const upid = stub.task({ runningPolls: 1 })
      stub.route("POST /nodes/pve1/qemu/101/status/start", () => ({ data: upid }))
      yield* withAdapter(clusterAt(stub.url), (v) => v.start(vm))

      const login = stub.seen.find((s) => s.path === "/access/ticket")
      assert.strictEqual(login?.headers["content-type"], "application/x-www-form-urlencoded")
      assert.strictEqual(login?.form.get("username"), "root@pam")
      assert.strictEqual(login?.form.get("password"), users["root@pam"])

      const [start] = stub.calls("POST /nodes/pve1/qemu/101/status/start")
      assert.match(start?.headers.cookie ?? "", /^PVEAuthCookie=PVE%3Aroot%40pam%3A/)
      assert.match(String(start?.headers.csrfpreventiontoken), /^[0-9A-F]{8}:/)
      const polls = stub.seen.filter((s) => s.path.endsWith("/status") && s.method === "GET")
      assert.isNotEmpty(polls)
      for (const poll of polls) assert.isUndefined(poll.headers.csrfpreventiontoken)
    }).pipe(Effect.scoped))

  it.effect("renews the ticket after an hour with one request shared by every concurrent caller", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      stub.route("GET /nodes/pve1/qemu/101/status/current", () => running)
      yield* withAdapter(clusterAt(stub.url), (v) =>
        Effect.gen(function*() {
          yield* Effect.all(Array.from({ length: 8 }, () => v.status(vm)), { concurrency: "unbounded" })
          assert.deepStrictEqual(stub.logins.map((l) => l.renewal), [false])
          const first = stub.seen.find((s) => s.path === "/access/ticket")
          assert.isDefined(first)

          yield* TestClock.adjust("59 minutes")
          yield* v.status(vm)
          assert.strictEqual(stub.logins.length, 1, "a ticket younger than an hour is reused")

          yield* TestClock.adjust("2 minutes")
          yield* Effect.all(Array.from({ length: 8 }, () => v.status(vm)), { concurrency: "unbounded" })
          assert.strictEqual(stub.logins.length, 2)
          const renewal = stub.logins[1]
          assert.isTrue(renewal?.renewal, "the current ticket is posted as the password")
          const renewed = stub.seen.filter((s) => s.path === "/access/ticket")[1]
          const firstTicket = decodeURIComponent(/PVEAuthCookie=([^;]+)/.exec(statusCalls(stub)[0]?.headers.cookie ?? "")?.[1] ?? "")
          assert.strictEqual(renewed?.form.get("password"), firstTicket)
          const lastCookies = new Set(statusCalls(stub).slice(-8).map((s) => s.headers.cookie))
          assert.strictEqual(lastCookies.size, 1)
          assert.notInclude([...lastCookies][0] ?? "", encodeURIComponent(firstTicket))
        }))
    }).pipe(Effect.scoped))

  it.live("signs in again once after a 401 and replays the request", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      stub.route("GET /nodes/pve1/qemu/101/status/current", () => running)
      yield* withAdapter(clusterAt(stub.url), (v) =>
        Effect.gen(function*() {
          yield* v.status(vm)
          stub.expireTickets()
          const status = yield* v.status(vm)
          assert.strictEqual(status.status, "running")
        }))
      assert.deepStrictEqual(stub.logins.map((l) => l.renewal), [false, false])
      assert.strictEqual(statusCalls(stub).length, 3, "first call, refused call, replay")
    }).pipe(Effect.scoped))

  it.live("gives up after one re-login when the cluster keeps refusing", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      stub.route("GET /nodes/pve1/qemu/101/status/current", () => ({ status: 401, reason: "Authentication failed!" }))
      const error = yield* Effect.flip(withAdapter(clusterAt(stub.url), (v) => v.status(vm)))
      assert.strictEqual(error._tag, "VirtualizationUnavailable")
      assert.strictEqual(stub.logins.length, 2)
      assert.strictEqual(statusCalls(stub).length, 2)
    }).pipe(Effect.scoped))

  it.live("with an API token sends the PVEAPIToken header, and neither tickets nor CSRF tokens", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      const upid = stub.task()
      stub.route("POST /nodes/pve1/qemu/101/status/stop", () => ({ data: upid }))
      yield* withAdapter(clusterAt(stub.url, { auth: tokenAuth(false) }), (v) => v.stop(vm))
      assert.strictEqual(stub.logins.length, 0)
      for (const request of stub.seen) {
        assert.strictEqual(request.headers.authorization, `PVEAPIToken=svc@pve!prov=${tokenSecret}`)
        assert.isUndefined(request.headers.cookie)
        assert.isUndefined(request.headers.csrfpreventiontoken)
      }
    }).pipe(Effect.scoped))

  it.live("keeps passwords, tickets and tokens out of errors", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub()
      stub.route("POST /nodes/pve1/qemu/101/config", (request) => ({
        status: 400,
        message: `Parameter verification failed. cookie ${request.headers.cookie} pw ${request.form.get("cipassword")}`
      }))
      const error = yield* Effect.flip(withAdapter(clusterAt(stub.url), (v) => v.setCloudInitPassword(vm, Redacted.make("Sup3r-secret"))))
      const shown = JSON.stringify(error)
      // A 400 is PVE refusing the parameters: permanent, so TaskFailed, with the answer as its exit status.
      assert.strictEqual(error._tag, "TaskFailed")
      assert.notInclude(shown, "Sup3r-secret")
      assert.notInclude(shown, "PVE:root")
      assert.notInclude(shown, "PVE%3Aroot")
      assert.include(shown, "<redacted>")

      const wrong = clusterAt(stub.url, { auth: { kind: "password", username: "root@pam", password: Redacted.make("Wr0ng-pass") } })
      const refused = yield* Effect.flip(withAdapter(wrong, (v) => v.status(vm)))
      assert.strictEqual(refused._tag, "VirtualizationUnavailable")
      assert.notInclude(JSON.stringify(refused), "Wr0ng-pass")
    }).pipe(Effect.scoped))
})

describe("TLS trust per cluster", () => {
  const fingerprint = new X509Certificate(fixtureCert).fingerprint256
  const listVms = (cluster: ProxmoxCluster) => withAdapter(cluster, (v) => v.listVms("c1"))
  const resources = (stub: Stub) =>
    stub.route("GET /cluster/resources", () => ({ data: [{ type: "qemu", id: "qemu/101", vmid: 101, node: "pve1" }] }))

  it.live("accepts the certificate whose SHA-256 fingerprint is pinned", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub({ tls: true })
      resources(stub)
      const vms = yield* listVms(clusterAt(stub.url, { tls: { ca: null, fingerprint, insecure: false } }))
      assert.strictEqual(vms.length, 1)
      // Lower case without colons is the same pin.
      const relaxed = fingerprint.replace(/:/g, "").toLowerCase()
      assert.strictEqual((yield* listVms(clusterAt(stub.url, { tls: { ca: null, fingerprint: relaxed, insecure: false } }))).length, 1)
    }).pipe(Effect.scoped))

  it.live("refuses another certificate before sending anything, credentials included", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub({ tls: true })
      resources(stub)
      const pin = `AA:${fingerprint.slice(3)}`
      const error = yield* Effect.flip(listVms(clusterAt(stub.url, { tls: { ca: null, fingerprint: pin, insecure: true } })))
      assert.strictEqual(error._tag, "VirtualizationUnavailable")
      assert.include(error._tag === "VirtualizationUnavailable" ? error.detail : "", "fingerprint")
      assert.strictEqual(stub.seen.length, 0)
    }).pipe(Effect.scoped))

  it.live("trusts a CA PEM, or anything when told insecure, and nothing unknown by default", () =>
    Effect.gen(function*() {
      const stub = yield* makeStub({ tls: true })
      resources(stub)
      assert.strictEqual((yield* listVms(clusterAt(stub.url, { tls: { ca: fixtureCert, fingerprint: null, insecure: false } }))).length, 1)
      assert.strictEqual((yield* listVms(clusterAt(stub.url, { tls: { ca: null, fingerprint: null, insecure: true } }))).length, 1)
      const before = stub.seen.length
      const error = yield* Effect.flip(listVms(clusterAt(stub.url)))
      assert.strictEqual(error._tag, "VirtualizationUnavailable")
      assert.strictEqual(stub.seen.length, before)
    }).pipe(Effect.scoped))
})
