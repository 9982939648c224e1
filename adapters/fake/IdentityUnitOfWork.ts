// UnitOfWork for in-memory repositories: each fake operation is already atomic, so a unit is the effect itself.
import { Layer } from "effect"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"

export const layer = Layer.succeed(UnitOfWork, UnitOfWork.of({ transaction: (effect) => effect }))
