// An operator's hold on a service (issue 14 §2): the service is stopped whatever its subscription's periods say, until
// an operator lifts it. It carries the statement of reasons its customer was sent (DSA art. 17: the facts and
// circumstances, the ground relied on); a renewal, paid or not, never lifts it (registerProduct.ts asks).
import { Schema } from "effect"

/** The grounds an operator may rely on, each explained to the customer in their language (notices/templates.ts). */
export const HoldGround = Schema.Literals(["terms_of_service", "illegal_content", "abuse", "security", "fraud"])
export type HoldGround = typeof HoldGround.Type

export class ServiceHold extends Schema.Class<ServiceHold>("ServiceHold")({
  id: Schema.String,
  subscriptionId: Schema.String,
  placedBy: Schema.String,
  placedAt: Schema.Date,
  /** The facts and circumstances the decision rests on, as the operator wrote them (the customer reads them). */
  facts: Schema.String,
  ground: HoldGround,
  liftedBy: Schema.NullOr(Schema.String),
  liftedAt: Schema.NullOr(Schema.Date),
  liftReason: Schema.NullOr(Schema.String)
}) {}
