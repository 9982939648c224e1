// The customer's subscriptions over HTTP a page at a time (GET /api/subscriptions?after=&limit=): each once, oldest
// first, `next` while more remain; without `limit` the whole list of a usual customer as before; a cursor the server
// did not make reads as the first page; a size out of 1–100 is a 400.
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrderId, PlanId, SubscriptionId } from "../../domain/billing/Billing.ts"
import { Orders } from "../../ports/Orders.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { startTestServer } from "../support/testServer.ts"
import { leakScanner, signedInCustomer } from "../support/vpsHttp.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer()
}, 120_000)
afterAll(() => server?.stop())

type Page = { readonly subscriptions: ReadonlyArray<{ readonly id: string }>; readonly next?: string }

describe("GET /api/subscriptions, a page at a time", () => {
  it("pages with a cursor, each subscription once, oldest first", async () => {
    const dana = await signedInCustomer(server, await leakScanner(server), "dana")
    const me = JSON.parse((await dana.get("/api/auth/me")).text) as { readonly user: { readonly id: string } }
    const base = Date.parse("2026-02-01T10:00:00.000Z")
    const made = await server.runtime.runPromise(Effect.forEach(Array.from({ length: 5 }, (_, i) => i), (i) =>
      Effect.gen(function*() {
        const now = new Date(base + (i % 2) * 60_000)
        const order = yield* (yield* Orders).create({
          id: OrderId.make(randomUUID()), userId: me.user.id, planId: "vps-s", kind: "vps", options: {}, totalSteps: 1,
          expiresAt: now, now
        })
        return yield* (yield* Subscriptions).create({
          id: SubscriptionId.make(randomUUID()), userId: me.user.id, planId: PlanId.make("vps-s"), kind: "vps",
          orderId: order.id, currentPeriodEnd: new Date(base + 30 * 86_400_000), now
        })
      })))
    const expected = [...made].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)).map((s) => s.id)
    const seen: Array<string> = []
    let after: string | undefined
    for (let page = 0; page < 5; page++) {
      const reply = await dana.get(`/api/subscriptions?limit=2${after === undefined ? "" : `&after=${after}`}`)
      expect(reply.status).toBe(200)
      const body = JSON.parse(reply.text) as Page
      seen.push(...body.subscriptions.map((s) => s.id))
      after = body.next
      if (after === undefined) break
    }
    expect(seen).toEqual(expected)
    const whole = JSON.parse((await dana.get("/api/subscriptions")).text) as Page
    expect(whole.subscriptions.map((s) => s.id)).toEqual(expected)
    expect(whole).not.toHaveProperty("next")
    const forged = JSON.parse((await dana.get("/api/subscriptions?limit=2&after=bm90LWEtY3Vyc29y")).text) as Page
    expect(forged.subscriptions.map((s) => s.id)).toEqual(expected.slice(0, 2))
    expect((await dana.get("/api/subscriptions?limit=101")).status).toBe(400)
  }, 60_000)
})
