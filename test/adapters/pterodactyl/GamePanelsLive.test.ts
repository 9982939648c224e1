// GamePanels from the catalog and the sealed keys a catalog file stored (app/GamePanelsLive.ts): where the adapter
// finds a panel, and when it is unknown.
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as GamePanelsLive from "../../../app/GamePanelsLive.ts"
import { Catalog } from "../../../ports/Catalog.ts"
import { GamePanels } from "../../../ports/GamePanel.ts"
import { SecretBox } from "../../../ports/SecretBox.ts"
import { UpstreamSecrets } from "../../../ports/UpstreamSecrets.ts"
import { APPLICATION_KEY, apply, catalogEnv, catalogFile, CLIENT_KEY, panel } from "../../domain/catalog/catalogMother.ts"

const env = () => GamePanelsLive.layer.pipe(Layer.provideMerge(catalogEnv()))
const get = (name: string) => Effect.flatMap(GamePanels, (panels) => panels.get(name))

describe("GamePanels from the catalog", () => {
  it.effect("a panel comes with its URL and both keys opened", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      const connection = yield* get("panel")
      assert.deepStrictEqual([connection.name, connection.url], ["panel", "https://panel.example"])
      assert.strictEqual(Redacted.value(connection.applicationKey), APPLICATION_KEY)
      assert.strictEqual(Redacted.value(connection.clientKey), CLIENT_KEY)
      assert.notInclude(String(connection.applicationKey), APPLICATION_KEY)
    }).pipe(Effect.provide(env())))

  it.effect("an unknown or retired panel is PanelUnknown", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      yield* (yield* Catalog).retire("panel", "panel")
      const retired = yield* Effect.flip(get("panel"))
      const unknown = yield* Effect.flip(get("elsewhere"))
      assert.deepStrictEqual([retired._tag, retired.panel, unknown._tag, unknown.panel], ["PanelUnknown", "panel", "PanelUnknown", "elsewhere"])
    }).pipe(Effect.provide(env())))

  it.effect("a panel whose key is missing is PanelUnknown, as the port says", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      yield* (yield* UpstreamSecrets).remove("pterodactyl:panel:client-key")
      assert.strictEqual((yield* Effect.flip(get("panel")))._tag, "PanelUnknown")
    }).pipe(Effect.provide(env())))

  it.effect("a stored key that no longer opens is a defect naming it", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      const secrets = yield* UpstreamSecrets
      const box = yield* SecretBox
      // Sealed for another name: it no longer opens under this one.
      const foreign = yield* box.seal(Redacted.make("x"), "upstream-secret:someone-else")
      yield* secrets.put("pterodactyl:panel:application-key", foreign, new Date(0))
      const exit = yield* Effect.exit(get("panel"))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.include(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "", `"pterodactyl:panel:application-key"`)
    }).pipe(Effect.provide(env())))

  it.effect("the opened answer is kept 5 s: a new URL is seen after that", () =>
    Effect.gen(function*() {
      yield* apply(catalogFile())
      yield* get("panel")
      yield* apply(catalogFile({ pterodactyl: [panel({ url: "https://panel2.example" })] }))
      assert.strictEqual((yield* get("panel")).url, "https://panel.example")
      yield* TestClock.adjust("6 seconds")
      assert.strictEqual((yield* get("panel")).url, "https://panel2.example")
    }).pipe(Effect.provide(env())))
})
