// `BENCH_ONLY=webhooks`: verified Stripe webhook deliveries on real PostgreSQL. A production server of its own (no
// sandbox; the Stripe keys stored sealed with `secrets put`, as an operator does) takes signed events from
// `concurrency` closed loops for `seconds`: each delivery is verified with the SDK's `constructEvent`, its id stored
// under the primary key in the same transaction as its effect. The mix is what Stripe sends: a paid checkout for an
// order we do not have (looked up, recorded), a refund confirmation (recorded), and one redelivery in ten (a duplicate:
// nothing written).
import { randomInt, randomUUID } from "node:crypto"
import { Agent, request } from "node:http"
import { resolve } from "node:path"
import Stripe from "stripe"
import { fixed, judge, ms, rps, type Section } from "./report.ts"
import { type Cleanup, createDatabase, progress, runProgram, startServer } from "./system.ts"

export interface WebhookBenchSettings {
  readonly adminUrl: string
  readonly bcryptCost: number
  readonly seconds: number
  readonly concurrency: number
}

const SECRET = `whsec_bench_${randomUUID().replace(/-/g, "")}`
const PATH = "/api/payments/stripe/webhook"

const now = () => Math.floor(Date.now() / 1000)

const paidCheckout = (id: string) => ({
  id,
  object: "event",
  type: "checkout.session.completed",
  created: now(),
  data: {
    object: {
      id: `cs_test_${id}`,
      object: "checkout.session",
      mode: "payment",
      status: "complete",
      payment_status: "paid",
      client_reference_id: randomUUID(),
      customer: "cus_bench",
      payment_intent: `pi_${id}`,
      amount_total: 500
    }
  }
})

const refunded = (id: string) => ({
  id,
  object: "event",
  type: "charge.refunded",
  created: now(),
  data: { object: { id: `ch_${id}`, object: "charge", payment_intent: `pi_${id}`, amount_refunded: 500 } }
})

/** One delivery; resolves with its status and how long it took (ms). */
const deliver = (agent: Agent, url: URL, payload: string): Promise<{ status: number; ms: number }> =>
  new Promise((resolve) => {
    const started = performance.now()
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now() })
    const req = request(url, {
      agent,
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature, "content-length": Buffer.byteLength(payload) },
      timeout: 10_000
    }, (res) => {
      res.resume()
      res.once("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }))
    })
    req.once("timeout", () => req.destroy(new Error("timeout")))
    req.once("error", () => resolve({ status: 0, ms: performance.now() - started }))
    req.end(payload)
  })

const percentile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN

export const runWebhookBench = async (settings: WebhookBenchSettings, cleanup: Cleanup) => {
  const database = await createDatabase(settings.adminUrl, cleanup)
  const server = await startServer({
    databaseUrl: database.url,
    bcryptCost: settings.bcryptCost,
    nodeOptions: undefined,
    // Production without a sandbox: Stripe is configured by its sealed keys; no e-mail is sent by these events.
    env: {
      SANDBOX: "false",
      SMTP_URL: "smtp://127.0.0.1:9",
      REGISTRY_PROVIDER: "recherche-entreprises",
      // The seller printed on invoices (required outside sandbox mode): the test suite's example company.
      SELLER_FILE: resolve(import.meta.dirname, "..", "test", "fixtures", "seller.json"),
      // The legal pages' texts (required outside sandbox mode): the test suite's example texts.
      LEGAL_DIR: resolve(import.meta.dirname, "..", "test", "fixtures", "legal")
    },
    beforeStart: async (env) => {
      for (const [name, value] of [["stripe:secret-key", "sk_test_bench"], ["stripe:webhook-secret", SECRET]] as const) {
        await runProgram(process.execPath, ["app/cli.ts", "secrets", "put", name, "--from-env", "BENCH_SECRET"], {
          env: { ...env, BENCH_SECRET: value },
          timeoutMs: 60_000
        })
      }
    }
  }, cleanup)
  progress(`webhooks: server pid ${server.pid} on ${server.url}`)
  const url = new URL(PATH, server.url)
  const agent = new Agent({ keepAlive: true, maxSockets: settings.concurrency })
  const latencies: Array<number> = []
  const statuses = new Map<number, number>()
  const sent: Array<string> = []
  let n = 0
  const payloadFor = () => {
    n++
    // One in ten is a redelivery of an event already sent.
    if (n % 10 === 0 && sent.length > 0) return sent[randomInt(sent.length)]!
    const id = `evt_bench_${randomUUID().replace(/-/g, "")}`
    const payload = JSON.stringify(n % 2 === 0 ? paidCheckout(id) : refunded(id))
    sent.push(payload)
    return payload
  }
  // A warm-up second, not counted.
  const warmUntil = performance.now() + 1_000
  while (performance.now() < warmUntil) await deliver(agent, url, payloadFor())
  const until = performance.now() + settings.seconds * 1_000
  const started = performance.now()
  await Promise.all(Array.from({ length: settings.concurrency }, async () => {
    while (performance.now() < until) {
      const { status, ms: took } = await deliver(agent, url, payloadFor())
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      latencies.push(took)
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  const sorted = [...latencies].sort((a, b) => a - b)
  const ok = statuses.get(200) ?? 0
  const valid = ok === latencies.length
  const json = {
    concurrency: settings.concurrency,
    seconds: elapsed,
    deliveries: latencies.length,
    throughputPerSecond: ok / elapsed,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    statuses: Object.fromEntries([...statuses].map(([s, c]) => [String(s), c]))
  }
  const sections: Array<Section> = [{
    title: `(w) verified Stripe webhook deliveries on PostgreSQL, ${settings.concurrency} at a time for ${fixed(elapsed)} s`,
    lines: [
      { label: "throughput (200 answers)", value: rps(json.throughputPerSecond) },
      { label: "p50 latency", value: ms(json.p50Ms) },
      { label: "p99 latency", value: ms(json.p99Ms), target: "< 100 ms (Stripe waits a few seconds)", verdict: judge(json.p99Ms < 100, valid) }
    ],
    notes: [`statuses ${JSON.stringify(json.statuses)}; mix: paid checkout of an unknown order, refund confirmation, 1 in 10 a redelivery`]
  }]
  return { json, sections }
}
