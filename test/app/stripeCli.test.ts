// `npm run admin -- stripe register-webhook URL` against the sandbox Stripe (the official SDK over loopback): the
// endpoint listens to the events billing handles, its secret is stored sealed, and the one before it stays accepted.
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import Stripe from "stripe"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as MemoryOutbox from "../../adapters/fake/MemoryOutbox.ts"
import * as MemoryUpstreamSecrets from "../../adapters/fake/MemoryUpstreamSecrets.ts"
import { HANDLED_EVENTS } from "../../adapters/stripe/notifications.ts"
import { sandboxStripe } from "../../adapters/stripe/sandbox/SandboxStripe.ts"
import { makeAdmin, SecretInput } from "../../app/cli.ts"
import { PREVIOUS_WEBHOOK_SECRET, stripeCredentials, WEBHOOK_SECRET } from "../../app/StripeCredentials.ts"
import { Outbox } from "../../ports/Outbox.ts"
import { UpstreamSecrets } from "../../ports/UpstreamSecrets.ts"

const keys = { current: Redacted.make(new Uint8Array(32).fill(0xc3)), previous: [] }
const webhookUrl = "https://panel.example/api/payments/stripe/webhook"

const setup = Effect.gen(function*() {
  const sandbox = yield* sandboxStripe()
  const secrets = yield* MemoryUpstreamSecrets.make
  const box = AesGcmSecretBox.layer(keys)
  const stores = Layer.mergeAll(Layer.succeed(UpstreamSecrets, secrets), Layer.succeed(Outbox, yield* MemoryOutbox.make), box)
  /** The admin command with `input` on standard input. */
  const admin = (args: ReadonlyArray<string>, input = "") =>
    Command.runWith(
      makeAdmin(
        Layer.merge(stores, Layer.succeed(SecretInput, { read: Effect.succeed(Redacted.make(input)) })),
        Effect.succeed([]),
        undefined,
        undefined,
        { host: sandbox.host, port: sandbox.port, protocol: "http" }
      ),
      { version: "test" }
    )(args).pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, TestConsole.layer)))
  const credentials = stripeCredentials.pipe(Effect.provide(stores))
  const sdk = new Stripe(sandbox.secretKey, { host: sandbox.host, port: sandbox.port, protocol: "http", maxNetworkRetries: 0 })
  return { sandbox, admin, credentials, secrets, sdk }
})

const webhookSecrets = (credentials: Effect.Effect<Option.Option<{ readonly webhookSecrets: ReadonlyArray<Redacted.Redacted<string>> }>>) =>
  Effect.map(credentials, (c) => Option.getOrThrow(c).webhookSecrets.map(Redacted.value))

describe("admin CLI: stripe register-webhook", () => {
  it.effect("without a Stripe key it refuses and stores nothing", () =>
    Effect.gen(function*() {
      const { admin, secrets } = yield* setup
      assert.strictEqual((yield* Effect.flip(admin(["stripe", "register-webhook", webhookUrl])))._tag, "StripeKeyMissing")
      assert.deepStrictEqual(yield* secrets.list, [])
    }))

  it.effect("registers the endpoint for the handled events and stores its secret; a second registration keeps the first as previous", () =>
    Effect.gen(function*() {
      const { admin, credentials, sandbox, sdk } = yield* setup
      assert.isTrue(Option.isNone(yield* credentials), "not configured before the key is stored")
      yield* admin(["secrets", "put", "stripe:secret-key"], sandbox.secretKey)
      assert.deepStrictEqual(yield* webhookSecrets(credentials), [], "configured with the key alone; no webhook secret yet")
      yield* admin(["stripe", "register-webhook", webhookUrl])
      const endpoints = (yield* Effect.promise(() => sdk.webhookEndpoints.list())).data
      assert.deepStrictEqual(endpoints.map((e) => [e.url, [...e.enabled_events].sort()]), [[webhookUrl, [...HANDLED_EVENTS].sort()]])
      const [first] = yield* webhookSecrets(credentials)
      assert.match(first ?? "", /^whsec_/)
      const output = (yield* TestConsole.logLines).map(String).join("\n")
      assert.include(output, WEBHOOK_SECRET)
      assert.notInclude(output, first ?? "-")
      assert.notInclude(output, sandbox.secretKey)
      yield* admin(["stripe", "register-webhook", webhookUrl])
      const [current, previous] = yield* webhookSecrets(credentials)
      assert.notStrictEqual(current, first)
      assert.strictEqual(previous, first, `the first is kept as ${PREVIOUS_WEBHOOK_SECRET}`)
    }))

  it.effect("Stripe failing leaves the stored secrets as they were", () =>
    Effect.gen(function*() {
      const { admin, sandbox, secrets } = yield* setup
      yield* admin(["secrets", "put", "stripe:secret-key"], sandbox.secretKey)
      yield* sandbox.control.failNextApiCalls({ times: 5 })
      assert.strictEqual((yield* Effect.flip(admin(["stripe", "register-webhook", webhookUrl])))._tag, "PaymentUnavailable")
      assert.deepStrictEqual((yield* secrets.list).map((s) => s.name), ["stripe:secret-key"])
    }))
})
