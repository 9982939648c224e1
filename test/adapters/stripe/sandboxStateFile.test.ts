// The sandbox Stripe's state file: a restart finds what the platform's records name (customers, saved cards) and an
// idempotency key used before it still replays (a process killed between a charge and its record charges once).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sandboxStripe } from "../../../adapters/stripe/sandbox/SandboxStripe.ts"
import { keepInFile } from "../../../app/sandbox/StateFile.ts"
import { call, savedCard, sdk } from "./support.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "sandbox-stripe-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const secretKey = "sk_test_statefilestatefilestatefile"

describe("sandbox Stripe state file", () => {
  it.live("a restart keeps customers, saved cards, events and idempotency answers; the start's endpoint keeps its secret", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* tempDir
      const stateFile = join(dir, "sandbox-stripe.json")
      const options = { keepState: keepInFile(stateFile, "sandbox Stripe"), secretKey, webhook: { url: "http://127.0.0.1:9/webhook" } }
      const before = yield* Effect.scoped(Effect.gen(function*() {
        const sandbox = yield* sandboxStripe(options)
        const stripe = sdk(sandbox)
        const { customer, paymentMethod } = yield* savedCard(stripe, "4242424242424242")
        const renewal = yield* call(() =>
          stripe.paymentIntents.create(
            { amount: 1200, currency: "eur", customer: customer.id, payment_method: paymentMethod, off_session: true, confirm: true },
            { idempotencyKey: "renew:s1:2026-12-01" }
          )
        )
        // Saved soon after the change, not only at the stop: a process killed now keeps the renewal.
        yield* Effect.sleep("500 millis")
        assert.include(readFileSync(stateFile, "utf8"), renewal.id)
        return { customer, paymentMethod, renewal, webhookSecret: sandbox.webhookSecret, events: (yield* sandbox.control.events).length }
      }))
      assert.isTrue(existsSync(stateFile))
      assert.strictEqual(statSync(stateFile).mode & 0o777, 0o600)

      const sandbox = yield* sandboxStripe(options)
      const stripe = sdk(sandbox)
      assert.strictEqual(sandbox.webhookSecret, before.webhookSecret)
      assert.strictEqual((yield* call(() => stripe.webhookEndpoints.list())).data.length, 1)
      const customer = yield* call(() => stripe.customers.retrieve(before.customer.id))
      assert.deepStrictEqual("metadata" in customer ? customer.metadata : undefined, { userId: "u" })
      const replay = yield* call(() =>
        stripe.paymentIntents.create(
          { amount: 1200, currency: "eur", customer: before.customer.id, payment_method: before.paymentMethod, off_session: true, confirm: true },
          { idempotencyKey: "renew:s1:2026-12-01" }
        )
      )
      assert.strictEqual(replay.id, before.renewal.id)
      assert.strictEqual((yield* sandbox.control.events).length, before.events)
      const next = yield* call(() =>
        stripe.paymentIntents.create({ amount: 1200, currency: "eur", customer: before.customer.id, payment_method: before.paymentMethod, off_session: true, confirm: true })
      )
      assert.strictEqual(next.status, "succeeded")
    })))

  it.live("a file written by the sandbox's earlier state file code (the same version 1 document) loads", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* tempDir
      const stateFile = join(dir, "sandbox-stripe.json")
      const customer = { id: "cus_kept", object: "customer", email: "a@example.com", metadata: { userId: "u" }, created: 1_700_000_000 }
      const empty = ["sessions", "paymentIntents", "paymentMethods", "setupIntents", "charges", "refunds", "disputes", "events",
        "endpoints", "sessionExtras", "cards", "endpointSecrets", "previousSecrets", "eventTargets", "idempotent"]
      // As that code wrote it: compact JSON, no trailing newline.
      writeFileSync(stateFile, JSON.stringify({ version: 1, offsetSeconds: 0, customers: [customer], ...Object.fromEntries(empty.map((k) => [k, []])) }))
      const warnings: Array<string> = []
      const sandbox = yield* sandboxStripe({ keepState: keepInFile(stateFile, "sandbox Stripe"), secretKey, onWarning: (m) => warnings.push(m) })
      const kept = yield* call(() => sdk(sandbox).customers.retrieve("cus_kept"))
      assert.deepStrictEqual("metadata" in kept ? kept.metadata : undefined, { userId: "u" })
      assert.deepStrictEqual(warnings, [])
      assert.deepStrictEqual(readdirSync(dir), ["sandbox-stripe.json"])
    })))

  it.live("a file it did not write is moved aside and the sandbox starts empty", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* tempDir
      const stateFile = join(dir, "sandbox-stripe.json")
      writeFileSync(stateFile, JSON.stringify({ version: 1, customers: "nope" }))
      const warnings: Array<string> = []
      const sandbox = yield* sandboxStripe({ keepState: keepInFile(stateFile, "sandbox Stripe", "no objects"), onWarning: (m) => warnings.push(m) })
      assert.strictEqual((yield* call(() => sdk(sandbox).events.list())).data.length, 0)
      const aside = readdirSync(dir).filter((name) => name.startsWith("sandbox-stripe.json.invalid-"))
      assert.lengthOf(aside, 1)
      assert.lengthOf(warnings, 1)
      assert.include(warnings[0], `sandbox Stripe: state file ${stateFile} is invalid (`)
      assert.include(warnings[0], `it was moved to ${join(dir, aside[0] ?? "")}, and the sandbox starts with no objects only`)
    })))
})
