// The public catalog's contract (schemas and endpoints only): GET /api/plans, what a customer can order, and
// GET /api/platform, whether what is on sale is a simulation.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const VpsPlanView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("vps"),
  name: Schema.String,
  priceCents: Count,
  vcpu: Count,
  ramMiB: Count,
  diskGiB: Count,
  snapshotLimit: Count,
  /** The operating systems it can be installed with now. */
  templates: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String }))
}).annotate({ identifier: "VpsPlan" })

export const GamePlanView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("game"),
  name: Schema.String,
  priceCents: Count,
  memoryMiB: Count,
  diskMiB: Count,
  /** 100 = one core; 0 = no limit. */
  cpuPercent: Count,
  databases: Count,
  backups: Count,
  allocations: Count,
  /** Variables the customer may set when ordering (`options.variables`). */
  userVariables: Schema.Array(Schema.String)
}).annotate({ identifier: "GamePlan" })

export const PlansEnvelope = Schema.Struct({ plans: Schema.Array(Schema.Union([VpsPlanView, GamePlanView])) })

export const PlatformView = Schema.Struct({
  /**
   * Sandbox mode: simulated Proxmox VE and Pterodactyl with demo plans, and a payment gateway that approves every
   * order without taking money. The panel shows a "demo" banner.
   */
  sandbox: Schema.Boolean
}).annotate({ identifier: "Platform" })

export class CatalogApi extends HttpApiGroup.make("catalog")
  .add(HttpApiEndpoint.get("plans", "/plans", { success: PlansEnvelope }))
  .add(
    HttpApiEndpoint.get("platform", "/platform", { success: PlatformView }).annotateMerge(OpenApi.annotations({
      summary: "How this platform runs",
      description: "Public. `sandbox: true`: everything on sale is simulated (demo plans, payments approved without " +
        "taking money); the panel then shows a demo banner. Outside sandbox mode nothing is for sale until the operator " +
        "registers upstreams and plans."
    }))
  )
  .prefix("/api")
  .annotateMerge(OpenApi.annotations({
    title: "Catalog",
    description: "The plans on sale and the platform's mode, public; prices are monthly, in euro cents"
  }))
{}
