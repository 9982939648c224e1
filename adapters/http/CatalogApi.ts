// The public catalog's contract (schemas and endpoints only): GET /api/plans, what a customer can order, and
// GET /api/platform, whether what is on sale is a simulation.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { SessionIfSignedIn } from "./AccountsApi.ts"
import { PlansEnvelope, PlatformView } from "./views.ts"

export class CatalogApi extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("plans", "/plans", { success: PlansEnvelope }).annotateMerge(OpenApi.annotations({
      summary: "The plans on sale",
      description: "Public. `priceCents` is the monthly price excluding VAT; `priceIncludingVatCents` is what the " +
        "visitor would be charged, by the same VAT decision as the payment: a signed-in customer's billing profile " +
        "(a customer without one yet, and a visitor who is not signed in: French VAT), e.g. 600 for 500 at 20 %, 500 " +
        "with `vatCategory` `AE` (reverse charge) for an EU business whose VAT number VIES confirmed. `audience`: " +
        "`anonymous` and `consumer` are shown prices including VAT, `business` both. Signed in: `Cache-Control: no-store`."
    }))
  )
  .add(
    HttpApiEndpoint.get("platform", "/platform", { success: PlatformView }).annotateMerge(OpenApi.annotations({
      summary: "How this platform runs",
      description: "Public. `sandbox: true`: everything on sale is simulated (demo plans, payments approved without " +
        "taking money); the panel then shows a demo banner. Outside sandbox mode nothing is for sale until the operator " +
        "registers upstreams and plans."
    }))
  )
  .middleware(SessionIfSignedIn)
  .prefix("/api")
  .annotateMerge(OpenApi.annotations({
    title: "Catalog",
    description: "The plans on sale and the platform's mode, public; prices are monthly, in euro cents"
  }))
{}
