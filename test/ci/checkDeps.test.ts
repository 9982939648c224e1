// The dependency-rule check itself: each rule of .dependency-cruiser.mjs must catch its violation in a small tree, a
// clean tree must pass, and the known-violations list must tolerate only what it names.
import { afterAll, describe, expect, it } from "vitest"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { checkTree, describe as describeViolation, knownViolationsFile, writeBaseline } from "../../.ci/check-deps.ts"

const roots: Array<string> = []
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

/** Packages the fixture trees import, as small as resolution needs. */
const packages: Record<string, string> = {
  "node_modules/effect/package.json": `{ "name": "effect", "type": "module", "exports": { ".": "./index.js", "./*": "./*.js" } }`,
  "node_modules/effect/index.js": "export const Effect = {}\n",
  "node_modules/effect/Schema.js": "export const Schema = {}\n",
  "node_modules/jose/package.json": `{ "name": "jose", "type": "module", "exports": "./index.js" }`,
  "node_modules/jose/index.js": "export const x = 1\n"
}

/** A tree that obeys every rule: each layer imports what it may. */
const clean: Record<string, string> = {
  "domain/account/User.ts": `import { Schema } from "effect/Schema"\nexport type User = { id: string }\nexport const make = () => Schema`,
  "domain/billing/Ordering.ts":
    `import { Effect } from "effect"\nimport { PaymentGateway } from "../../ports/PaymentGateway.ts"\n` +
    `import type { User } from "../account/User.ts"\nexport const order = (u: User) => [Effect, PaymentGateway, u]`,
  "domain/vps/Provision.ts": `import { Virtualization } from "../../ports/Virtualization.ts"\nexport const p = Virtualization`,
  "domain/game/Provision.ts": `import { Effect } from "effect"\nimport { make } from "../account/User.ts"\nexport const g = [Effect, make]`,
  "ports/PaymentGateway.ts": `import { Effect } from "effect"\nimport type { User } from "../domain/account/User.ts"\nexport const PaymentGateway = (u: User) => [Effect, u]`,
  "ports/Virtualization.ts":
    `import { type User } from "../domain/account/User.ts"\nexport type { User as Owner } from "../domain/account/User.ts"\n` +
    `import { PaymentGateway } from "./PaymentGateway.ts"\nexport const Virtualization = (u: User) => PaymentGateway(u)`,
  "adapters/http/Api.ts": `import { routes } from "./routes.ts"\nimport { order } from "../../domain/billing/Ordering.ts"\nexport const api = [routes, order]`,
  "adapters/http/routes.ts": `import { x } from "jose"\nimport { readFile } from "node:fs"\nexport const routes = [x, readFile]`,
  "adapters/payments/Sandbox.ts": `import { PaymentGateway } from "../../ports/PaymentGateway.ts"\nexport const sandbox = PaymentGateway`,
  "app/main.ts": `import { api } from "../adapters/http/Api.ts"\nimport { sandbox } from "../adapters/payments/Sandbox.ts"\nexport const main = [api, sandbox]`,
  "bench/run.ts": `import { main } from "../app/main.ts"\nexport const run = main`
}

const tree = (files: Record<string, string>): string => {
  const root = mkdtempSync(join(tmpdir(), "check-deps-"))
  roots.push(root)
  for (const [path, text] of Object.entries({ ...packages, ...files })) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** The violations of a tree as "rule: from → to" (or the cycle), sorted. */
const violationsOf = async (files: Record<string, string>) =>
  (await checkTree(tree(files))).violations.map((v) => `${v.rule.name}: ${describeViolation(v)}`).sort()

describe("dependency rule check", () => {
  it("the project tree obeys the rule, apart from the violations it lists as known", async () => {
    const report = await checkTree(join(import.meta.dirname, "..", ".."))
    expect(report.violations.map(describeViolation)).toEqual([])
    expect(report.fixed).toBe(0)
    expect(report.modules).toBeGreaterThan(200)
  })

  it("a tree where each layer imports only what it may passes", async () => {
    const report = await checkTree(tree(clean))
    expect(report).toMatchObject({ violations: [], known: 0, fixed: 0 })
  })

  it("domain/ imports only effect, ports/ and domain/: not node:*, another package, an adapter or app/", async () => {
    expect(await violationsOf({
      ...clean,
      "domain/account/Files.ts": `import { readFile } from "node:fs"\nexport const f = readFile`,
      "domain/account/Tokens.ts": `import { x } from "jose"\nexport const t = x`,
      "domain/account/Http.ts": `export { api } from "../../adapters/http/Api.ts"`,
      "domain/account/Late.ts": `export const late = () => import("../../app/main.ts")`
    })).toEqual([
      "domain-imports-only-effect-and-ports: domain/account/Files.ts → fs",
      "domain-imports-only-effect-and-ports: domain/account/Http.ts → adapters/http/Api.ts",
      "domain-imports-only-effect-and-ports: domain/account/Late.ts → app/main.ts",
      "domain-imports-only-effect-and-ports: domain/account/Tokens.ts → node_modules/jose/index.js"
    ])
  })

  it("ports/ imports only effect, other ports and domain/ types", async () => {
    expect(await violationsOf({
      ...clean,
      "ports/Tokens.ts": `import { x } from "jose"\nexport const t = x`,
      "ports/Users.ts": `import { make } from "../domain/account/User.ts"\nexport const u = make`,
      "ports/Mixed.ts": `import { type User, make } from "../domain/account/User.ts"\nexport const m = (u: User) => [u, make]`
    })).toEqual([
      "ports-import-only-effect-and-domain: ports/Tokens.ts → node_modules/jose/index.js",
      "ports-import-only-types-from-domain: ports/Mixed.ts → domain/account/User.ts",
      "ports-import-only-types-from-domain: ports/Users.ts → domain/account/User.ts"
    ])
  })

  it("an adapter never imports another adapter folder, nor app/", async () => {
    expect(await violationsOf({
      ...clean,
      "adapters/http/Payments.ts": `import { sandbox } from "../payments/Sandbox.ts"\nexport const p = sandbox`,
      "adapters/payments/Wiring.ts": `export { main } from "../../app/main.ts"`
    })).toEqual([
      "adapters-never-import-another-adapter: adapters/http/Payments.ts → adapters/payments/Sandbox.ts",
      "adapters-never-import-app: adapters/payments/Wiring.ts → app/main.ts"
    ])
  })

  it("billing never imports a product, even for a type", async () => {
    expect(await violationsOf({
      ...clean,
      "domain/billing/Renewal.ts": `import { p } from "../vps/Provision.ts"\nexport const r = p`,
      "domain/billing/Summary.ts": `import type { g } from "../game/Provision.ts"\nexport type S = typeof g`
    })).toEqual([
      "billing-never-imports-a-product: domain/billing/Renewal.ts → domain/vps/Provision.ts",
      "billing-never-imports-a-product: domain/billing/Summary.ts → domain/game/Provision.ts"
    ])
  })

  it("the products never import each other", async () => {
    expect(await violationsOf({
      ...clean,
      "domain/vps/Shared.ts": `import { g } from "../game/Provision.ts"\nexport const s = g`,
      "domain/game/Shared.ts": `import { p } from "../vps/Provision.ts"\nexport const s = p`
    })).toEqual([
      "products-never-import-each-other: domain/game/Shared.ts → domain/vps/Provision.ts",
      "products-never-import-each-other: domain/vps/Shared.ts → domain/game/Provision.ts"
    ])
  })

  it("a product added as a new folder is held to the same rules, with no list to update", async () => {
    expect(await violationsOf({
      ...clean,
      "domain/dns/Provision.ts": `import { p } from "../vps/Provision.ts"\nexport const d = p`,
      "domain/billing/Zones.ts": `import { d } from "../dns/Provision.ts"\nexport const z = d`
    })).toEqual([
      "billing-never-imports-a-product: domain/billing/Zones.ts → domain/dns/Provision.ts",
      "products-never-import-each-other: domain/dns/Provision.ts → domain/vps/Provision.ts"
    ])
  })

  it("the products never import payments", async () => {
    expect(await violationsOf({
      ...clean,
      "domain/vps/Charge.ts": `import { PaymentGateway } from "../../ports/PaymentGateway.ts"\nexport const c = PaymentGateway`,
      "domain/game/Charge.ts": `import { sandbox } from "../../adapters/payments/Sandbox.ts"\nexport const c = sandbox`
    })).toEqual([
      "domain-imports-only-effect-and-ports: domain/game/Charge.ts → adapters/payments/Sandbox.ts",
      "products-never-import-payments: domain/game/Charge.ts → adapters/payments/Sandbox.ts",
      "products-never-import-payments: domain/vps/Charge.ts → ports/PaymentGateway.ts"
    ])
  })

  it("no module depends on itself through others, in any folder of the source tree", async () => {
    expect(await violationsOf({
      ...clean,
      "domain/account/A.ts": `import type { B } from "./B.ts"\nexport type A = { b?: B }`,
      "domain/account/B.ts": `import type { A } from "./A.ts"\nexport type B = { a?: A }`,
      "bench/a.ts": `import { b } from "./b.ts"\nexport const a = () => b`,
      "bench/b.ts": `import { c } from "../.ci/c.ts"\nexport const b = () => c`,
      ".ci/c.ts": `import { a } from "../bench/a.ts"\nexport const c = () => a`
    })).toEqual([
      "no-circular: .ci/c.ts → bench/a.ts → bench/b.ts → .ci/c.ts",
      "no-circular: domain/account/A.ts → domain/account/B.ts → domain/account/A.ts"
    ])
  })

  describe("known violations", () => {
    const withKnownViolation = {
      ...clean,
      "domain/billing/Renewal.ts": `import { p } from "../vps/Provision.ts"\nexport const r = p`
    }
    const newViolation = `import { g } from "../game/Provision.ts"\nexport const r = g`
    /** A tree whose one violation is listed as known, as `--baseline=full` lists it. */
    const baselined = async () => {
      const root = tree(withKnownViolation)
      expect(await writeBaseline(root, "full")).toBe(1)
      return root
    }

    it("a violation the list names is tolerated and counted", async () => {
      expect(await checkTree(await baselined())).toMatchObject({ violations: [], known: 1, fixed: 0 })
    })

    it("a violation the list does not name fails, even beside a known one of the same rule", async () => {
      const root = await baselined()
      writeFileSync(join(root, "domain/billing/Refund.ts"), newViolation)
      const report = await checkTree(root)
      expect(report.violations.map(describeViolation)).toEqual(["domain/billing/Refund.ts → domain/game/Provision.ts"])
      expect(report.known).toBe(1)
    })

    it("a known violation that is fixed but still listed fails until the list shrinks", async () => {
      const root = await baselined()
      writeFileSync(join(root, "domain/billing/Renewal.ts"), "export const r = 1")
      expect(await checkTree(root)).toMatchObject({ violations: [], known: 0, fixed: 1 })
      expect(await writeBaseline(root, "shrink-only")).toBe(0)
      expect(await checkTree(root)).toMatchObject({ violations: [], known: 0, fixed: 0 })
    })

    it("shrinking the list never adds a new violation to it", async () => {
      const root = await baselined()
      const before = readFileSync(join(root, knownViolationsFile), "utf8")
      writeFileSync(join(root, "domain/billing/Refund.ts"), newViolation)
      expect(await writeBaseline(root, "shrink-only")).toBe(1)
      expect(readFileSync(join(root, knownViolationsFile), "utf8")).toBe(before)
      expect((await checkTree(root)).violations).toHaveLength(1)
    })
  })
})
