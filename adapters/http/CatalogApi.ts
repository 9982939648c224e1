// The public catalog's contract (schemas and endpoints only): GET /api/plans, what a customer can order.
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

export class CatalogApi extends HttpApiGroup.make("catalog")
  .add(HttpApiEndpoint.get("plans", "/plans", { success: PlansEnvelope }))
  .prefix("/api")
  .annotateMerge(OpenApi.annotations({
    title: "Catalog",
    description: "The plans on sale, public; prices are monthly, in euro cents"
  }))
{}
