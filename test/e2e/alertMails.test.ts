// The operators' alerts end to end: a real server whose alert pass runs on its own schedule (every 5 s here), the
// Stripe webhook refusing forged signatures, and the alert received once by a real SMTP server however many passes
// run while the incident is open; the incidents store, on the real database, lets one of many racing callers open an
// incident.
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsRecords } from "../../ports/OpsRecords.ts"
import { send } from "../support/fuzz.ts"
import { decodeQuotedPrintable, headerOf, type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { startTestServer } from "../support/testServer.ts"

const OPS = "ops@panel.test"
let sink: SmtpSink
let server: Awaited<ReturnType<typeof startTestServer>>

beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startTestServer({
    smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${sink.port}`)),
    alertEmail: Option.some(OPS),
    alertCheckSeconds: 5,
    alertWebhookSignatureFailures: 3
  })
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await sink?.close()
})

const forged = () =>
  send(server.url, {
    method: "POST",
    path: "/api/payments/stripe/webhook",
    headers: { "content-type": "application/json", "stripe-signature": `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}` },
    body: JSON.stringify({ id: "evt_forged", object: "event", type: "checkout.session.completed", data: { object: {} } })
  })

const query = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  server.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, run))

const alertsLastRun = () =>
  query((sql) => sql<{ readonly at: Date }>`SELECT last_started_at AS at FROM cron_runs WHERE name = 'alerts'`).then((rows) =>
    rows[0] === undefined ? 0 : new Date(rows[0].at).getTime())

const alertMails = () =>
  sink.received.filter((raw) => (headerOf(raw, "To") ?? "").includes(OPS) && (headerOf(raw, "Subject") ?? "").startsWith("[ALERT]"))

describe("alerts by e-mail", () => {
  it("webhook signature failures above the rate: one e-mail to the operators, not again while the incident is open", async () => {
    for (let i = 0; i < 3; i++) expect((await forged()).status).toBe(400)
    await expect.poll(() => alertMails().length, { timeout: 30_000, interval: 250 }).toBe(1)
    const [mail] = alertMails()
    expect(headerOf(mail!, "Subject")).toBe(
      "[ALERT] 3 payment webhooks were refused for a bad signature in the last 10 minutes (alert from 3). / " +
        "[ALERTE] 3 notifications de paiement ont été refusées pour une signature invalide ces 10 dernières minutes (alerte à partir de 3)."
    )
    expect(decodeQuotedPrintable(mail!)).toContain("Incident webhook-signature-failures, ouvert le")

    // More refusals and two more passes: the incident is still open, nothing more is sent.
    for (let i = 0; i < 3; i++) expect((await forged()).status).toBe(400)
    const after = Date.now()
    await expect.poll(alertsLastRun, { timeout: 30_000, interval: 250 }).toBeGreaterThan(after + 5_000)
    expect(alertMails()).toHaveLength(1)
    const incidents = await query((sql) =>
      sql<{ readonly key: string; readonly told: boolean; readonly open: boolean }>`
        SELECT key, told_at IS NOT NULL AS told, resolved_at IS NULL AS open FROM ops_incidents`)
    expect(incidents.map((r) => ({ ...r }))).toEqual([{ key: "webhook-signature-failures", told: true, open: true }])
  }, 90_000)

  it("twenty instances opening the same incident at once: one opens it", async () => {
    const opened = await server.runtime.runPromise(Effect.flatMap(OpsRecords, (ops) =>
      Effect.all(
        Array.from({ length: 20 }, () => ops.open("race:test", { en: "race", fr: "course" }, new Date())),
        { concurrency: "unbounded" }
      )))
    expect(opened.filter(Boolean)).toHaveLength(1)
    const resolved = await server.runtime.runPromise(Effect.flatMap(OpsRecords, (ops) => ops.resolve("race:test", new Date())))
    expect(resolved).toBe(true)
    const again = await server.runtime.runPromise(Effect.flatMap(OpsRecords, (ops) => ops.open("race:test", { en: "race", fr: "course" }, new Date())))
    expect(again).toBe(true)
  })
})
