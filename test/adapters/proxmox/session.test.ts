// How the Proxmox wrapper signs in and trusts a cluster, specified against the simulated PVE (in memory, and on
// loopback for TLS): tickets with CSRF tokens, renewal before expiry shared by concurrent callers, one re-login after
// a 401, API tokens, TLS trust (CA, fingerprint pin, insecure), and no credential in any error (reference/proxmox.md §1).
import { X509Certificate } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { type ProxmoxCluster } from "../../../ports/ProxmoxClusters.ts"
import { Virtualization } from "../../../ports/Virtualization.ts"
import {
  adapterLayer,
  apiPath,
  base,
  clusterAt,
  fixtureCert,
  inMemory,
  onLoopback,
  placeAt,
  scenario,
  token,
  tokenAuth,
  user,
  vm
} from "./simulatedPve.ts"

const statusKey = `GET ${base}/status/current`

describe("ProxmoxSession", () => {
  it.live("signs in with a form-posted ticket request, and sends the CSRF token on writes only", () =>
    scenario(
      (pve) => placeAt(pve),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.start(vm)
          const [login] = pve.requests("POST /access/ticket")
          assert.strictEqual(login?.headers["content-type"], "application/x-www-form-urlencoded")
          assert.deepInclude(login?.body, { username: user.username, password: user.password })

          const [start] = pve.calls(`POST ${base}/status/start`)
          assert.match(start?.headers["cookie"] ?? "", /^PVEAuthCookie=PVE%3Aconsole%40pve%3A/)
          assert.match(start?.headers["csrfpreventiontoken"] ?? "", /^[0-9A-F]{8}:/)
          const polls = pve.requests().filter((r) => r.method === "GET" && apiPath(r).includes("/tasks/"))
          assert.isNotEmpty(polls)
          for (const poll of polls) assert.isUndefined(poll.headers["csrfpreventiontoken"])
        })
    ))

  it.effect("renews the ticket after an hour with one request shared by every concurrent caller", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running" }),
      (v, pve) =>
        Effect.gen(function*() {
          const cookieOf = (r: { readonly headers: Readonly<Record<string, string>> } | undefined) =>
            decodeURIComponent(/PVEAuthCookie=([^;]+)/.exec(r?.headers["cookie"] ?? "")?.[1] ?? "")
          yield* Effect.all(Array.from({ length: 8 }, () => v.status(vm)), { concurrency: "unbounded" })
          assert.deepStrictEqual(pve.logins().map((l) => l.renewal), [false])

          yield* TestClock.adjust("59 minutes")
          yield* v.status(vm)
          assert.strictEqual(pve.logins().length, 1, "a ticket younger than an hour is reused")

          yield* TestClock.adjust("2 minutes")
          yield* Effect.all(Array.from({ length: 8 }, () => v.status(vm)), { concurrency: "unbounded" })
          assert.strictEqual(pve.logins().length, 2)
          const renewal = pve.logins()[1]
          const firstTicket = cookieOf(pve.calls(statusKey)[0])
          assert.isTrue(renewal?.renewal, "the current ticket is posted as the password")
          assert.strictEqual(renewal?.password, firstTicket)
          const lastTickets = new Set(pve.calls(statusKey).slice(-8).map(cookieOf))
          assert.strictEqual(lastTickets.size, 1)
          assert.notStrictEqual([...lastTickets][0], firstTicket)
        })
    ))

  it.live("signs in again once after a 401 and replays the request", () =>
    scenario(
      (pve) => placeAt(pve, { status: "running" }),
      (v, pve) =>
        Effect.gen(function*() {
          yield* v.status(vm)
          // Past the ticket's two hours on the cluster's clock: PVE refuses it (§1.3).
          pve.control.advanceClock(3 * 60 * 60 * 1000)
          assert.strictEqual((yield* v.status(vm)).status, "running")
          assert.deepStrictEqual(pve.logins().map((l) => l.renewal), [false, false])
          assert.strictEqual(pve.calls(statusKey).length, 3, "first call, refused call, replay")
        })
    ))

  it.live("gives up after one re-login when the cluster keeps refusing", () =>
    scenario(
      (pve) => {
        placeAt(pve)
        pve.control.inject({
          match: { method: "GET", path: /\/status\/current$/ },
          kind: { _tag: "status", status: 401, message: "Authentication failed!" },
          times: Infinity
        })
      },
      (v, pve) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* Effect.flip(v.status(vm)))._tag, "VirtualizationUnavailable")
          assert.strictEqual(pve.logins().length, 2)
          assert.strictEqual(pve.calls(statusKey).length, 2)
        })
    ))

  it.live("with an API token sends the PVEAPIToken header, and neither tickets nor CSRF tokens", () =>
    Effect.gen(function*() {
      const pve = yield* inMemory()
      placeAt(pve, { status: "running" })
      const agents = pve.agents
      yield* Effect.flatMap(Virtualization, (v) => v.stop(vm)).pipe(
        Effect.provide(adapterLayer(clusterAt(pve.url, { auth: tokenAuth(false) }), { connect: () => agents }))
      )
      assert.strictEqual(pve.control.state().vms.find((x) => x.vmid === vm.vmid)?.status, "stopped")
      assert.strictEqual(pve.logins().length, 0)
      assert.isNotEmpty(pve.requests())
      for (const request of pve.requests()) {
        assert.strictEqual(request.headers["authorization"], `PVEAPIToken=${token.id}=${token.secret}`)
        assert.isUndefined(request.headers["cookie"])
        assert.isUndefined(request.headers["csrfpreventiontoken"])
      }
    }).pipe(Effect.scoped))

  it.live("keeps passwords, tickets and tokens out of errors", () =>
    Effect.gen(function*() {
      const pve = yield* onLoopback()
      placeAt(pve)
      const withAdapter = <A, E>(cluster: ProxmoxCluster, f: (v: Virtualization["Service"]) => Effect.Effect<A, E>) =>
        Effect.flatMap(Virtualization, f).pipe(Effect.provide(adapterLayer(cluster)))
      const error = yield* withAdapter(clusterAt(pve.url), (v) =>
        Effect.gen(function*() {
          yield* v.status(vm)
          const cookie = pve.calls(statusKey)[0]?.headers["cookie"] ?? ""
          const ticket = decodeURIComponent(/PVEAuthCookie=([^;]+)/.exec(cookie)?.[1] ?? "")
          // An upstream whose error quotes what it was sent (a proxy's error page, a debugging build).
          pve.control.inject({
            match: { method: "POST", path: /\/config$/ },
            kind: { _tag: "status", status: 400, message: `Parameter verification failed. cookie ${cookie} ticket ${ticket} pw Sup3r-secret` }
          })
          return yield* Effect.flip(v.setCloudInitPassword(vm, Redacted.make("Sup3r-secret")))
        }))
      const shown = JSON.stringify(error)
      // A 400 is PVE refusing the parameters: permanent, so TaskFailed, with the answer as its exit status.
      assert.strictEqual(error._tag, "TaskFailed")
      assert.notInclude(shown, "Sup3r-secret")
      assert.notInclude(shown, "PVE:console")
      assert.notInclude(shown, "PVE%3Aconsole")
      assert.include(shown, "<redacted>")

      const wrong = clusterAt(pve.url, { auth: { kind: "password", username: user.username, password: Redacted.make("Wr0ng-pass") } })
      const refused = yield* Effect.flip(withAdapter(wrong, (v) => v.status(vm)))
      assert.strictEqual(refused._tag, "VirtualizationUnavailable")
      assert.notInclude(JSON.stringify(refused), "Wr0ng-pass")
    }).pipe(Effect.scoped))
})

describe("TLS trust per cluster", () => {
  const fingerprint = new X509Certificate(fixtureCert).fingerprint256
  const listVms = (cluster: ProxmoxCluster) => Effect.flatMap(Virtualization, (v) => v.listVms("c1")).pipe(Effect.provide(adapterLayer(cluster)))
  /** The seeded templates, which every listing on the cluster shows. */
  const seeded = 4

  it.live("accepts the certificate whose SHA-256 fingerprint is pinned", () =>
    Effect.gen(function*() {
      const pve = yield* onLoopback({ tls: true })
      assert.strictEqual((yield* listVms(clusterAt(pve.url, { tls: { ca: null, fingerprint, insecure: false } }))).length, seeded)
      // Lower case without colons is the same pin.
      const relaxed = fingerprint.replace(/:/g, "").toLowerCase()
      assert.strictEqual((yield* listVms(clusterAt(pve.url, { tls: { ca: null, fingerprint: relaxed, insecure: false } }))).length, seeded)
    }).pipe(Effect.scoped))

  it.live("refuses another certificate before sending anything, credentials included", () =>
    Effect.gen(function*() {
      const pve = yield* onLoopback({ tls: true })
      const pin = `AA:${fingerprint.slice(3)}`
      const error = yield* Effect.flip(listVms(clusterAt(pve.url, { tls: { ca: null, fingerprint: pin, insecure: true } })))
      assert.strictEqual(error._tag, "VirtualizationUnavailable")
      assert.include(error._tag === "VirtualizationUnavailable" ? error.detail : "", "fingerprint")
      assert.strictEqual(pve.requests().length, 0)
    }).pipe(Effect.scoped))

  it.live("trusts a CA PEM, or anything when told insecure, and nothing unknown by default", () =>
    Effect.gen(function*() {
      const pve = yield* onLoopback({ tls: true })
      assert.strictEqual((yield* listVms(clusterAt(pve.url, { tls: { ca: fixtureCert, fingerprint: null, insecure: false } }))).length, seeded)
      assert.strictEqual((yield* listVms(clusterAt(pve.url, { tls: { ca: null, fingerprint: null, insecure: true } }))).length, seeded)
      const before = pve.requests().length
      const error = yield* Effect.flip(listVms(clusterAt(pve.url)))
      assert.strictEqual(error._tag, "VirtualizationUnavailable")
      assert.strictEqual(pve.requests().length, before)
    }).pipe(Effect.scoped))
})
