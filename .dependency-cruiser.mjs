// The dependency rule of DESIGN.md §2 and §7, checked by dependency-cruiser (`npm run check:deps`, .ci/check-deps.ts).
// Violations that the tree still had when a rule was introduced are listed in .dependency-cruiser-known-violations.json
// and tolerated until fixed; any other one fails CI.

/**
 * The domain's areas that are not products. Every other folder of domain/ is a product billing sells, each a module of
 * its own: a new product is a new folder, and these rules hold for it without a change here. A new area that is no
 * product joins this list (until then, the rules below flag its imports as a product's).
 */
const shared = ["account", "audit", "backoffice", "billing", "catalog", "consoles", "notices", "ops", "reconcile", "secrets"]
const products = `domain/(?!(?:${shared.join("|")})/)([^/]+)/`

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "domain-imports-only-effect-and-ports",
      comment: "domain/ holds the business rules: it imports only `effect`, ports/ and domain/ itself (no node:*, " +
        "no driver, no HTTP, no SQL, no adapter, no app/).",
      severity: "error",
      from: { path: "^domain/" },
      to: { pathNot: ["^(domain|ports)/", "(^|/)node_modules/effect/"] }
    },
    {
      name: "ports-import-only-effect-and-domain",
      comment: "ports/ are the interfaces the domain needs: they import only `effect`, other ports and domain/.",
      severity: "error",
      from: { path: "^ports/" },
      to: { pathNot: ["^(domain|ports)/", "(^|/)node_modules/effect/"] }
    },
    {
      name: "ports-import-only-types-from-domain",
      comment: "a port names domain types but never runs domain code: `import type` (or `import { type A }`).",
      severity: "error",
      from: { path: "^ports/" },
      to: { path: "^domain/", dependencyTypesNot: ["type-only"] }
    },
    {
      name: "adapters-never-import-another-adapter",
      comment: "each adapter folder stands alone; what two adapters share is wired in app/.",
      severity: "error",
      from: { path: "^adapters/([^/]+)/" },
      to: { path: "^adapters/", pathNot: "^adapters/$1/" }
    },
    {
      name: "adapters-never-import-app",
      comment: "app/ wires adapters together; an adapter never reaches back into it.",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: "^app/" }
    },
    {
      name: "billing-never-imports-a-product",
      comment: "billing owns the port of \"a thing we sell\"; products implement it, billing names none of them.",
      severity: "error",
      from: { path: "^domain/billing/" },
      to: { path: `^${products}` }
    },
    {
      name: "products-never-import-each-other",
      comment: "a VPS and a game server are separate products: neither imports the other.",
      severity: "error",
      from: { path: `^${products}` },
      to: { path: `^${products}`, pathNot: "^domain/$1/" }
    },
    {
      name: "products-never-import-payments",
      comment: "products never see payments: charging is billing's business.",
      severity: "error",
      from: { path: `^${products}` },
      to: { path: ["^ports/PaymentGateway\\.ts$", "^adapters/payments/"] }
    },
    {
      name: "panel-imports-only-the-api-shapes-as-types",
      comment: "the panel (app/web) runs in the browser: of the server it names only the API's response schemas " +
        "(adapters/http/views.ts), as types (`import type`), so no server code reaches its bundle.",
      severity: "error",
      from: { path: "^app/web/" },
      to: { path: "^(domain|ports|adapters|app/(?!web/))", pathNot: "^adapters/http/views\\.ts$" }
    },
    {
      name: "panel-imports-the-api-shapes-as-types-only",
      comment: "see panel-imports-only-the-api-shapes-as-types.",
      severity: "error",
      from: { path: "^app/web/" },
      to: { path: "^adapters/http/views\\.ts$", dependencyTypesNot: ["type-only"] }
    },
    {
      name: "no-circular",
      comment: "no module depends on itself through others, anywhere in the source tree.",
      severity: "error",
      from: {},
      to: { circular: true }
    }
  ],
  options: {
    // dependency-cruiser reads TypeScript with the TypeScript compiler 2–6 or with swc; this project type-checks with
    // TypeScript 7, whose package has no compiler API, so swc parses. Type-only imports are kept (`import type`,
    // `import { type A }`): they are dependencies of the design even when erased at run time.
    parser: "swc",
    tsPreCompilationDeps: true,
    moduleSystems: ["es6", "cjs"],
    doNotFollow: { path: "(^|/)node_modules/" },
    exclude: { path: "^app/web/(dist|\\.dist-[^/]*)/" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "node", "default"],
      mainFields: ["module", "main"]
    },
    skipAnalysisNotInRules: true,
    // A violation fixed but still listed as known could come back unnoticed: the list must shrink with the fixes.
    baseline: { staleEntriesSeverity: "error" }
  }
}
