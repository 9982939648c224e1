// The public catalog's contract (schemas and endpoints only): GET /api/plans, what a customer can order, and
// GET /api/platform, whether what is on sale is a simulation.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { PlansEnvelope, PlatformView } from "./views.ts"

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
