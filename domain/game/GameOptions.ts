// What a customer chooses when ordering a game server (`{ variables?: { NAME: value } }`), checked against the
// plan (only its `userVariables`) and the egg's own rules, and the environment the panel server is created with.
import { Effect, Schema } from "effect"
import type { Egg } from "../../ports/GamePanel.ts"
import type { GamePlan } from "../catalog/Plan.ts"
import { InvalidOrderOption } from "../billing/BillingErrors.ts"
import { checkEggRules } from "./eggRules.ts"

export const GameOrderOptions = Schema.Struct({
  variables: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})
export type GameOrderOptions = typeof GameOrderOptions.Type

/** The panel's column is 191 characters; a value beyond it is never meaningful. */
const MAX_VALUE_LENGTH = 191

/** Decodes and checks the options against the plan alone (no panel call). */
export const decodeGameOptions = Effect.fn("decodeGameOptions")(function*(plan: GamePlan, raw: unknown) {
  const options = yield* Schema.decodeUnknownEffect(GameOrderOptions)(raw).pipe(
    Effect.mapError(() =>
      new InvalidOrderOption({ field: "options.variables", problem: "must be an object of variable names to text values" })
    )
  )
  const variables = options.variables ?? {}
  for (const [name, value] of Object.entries(variables)) {
    if (!plan.userVariables.includes(name)) {
      return yield* new InvalidOrderOption({
        field: `options.variables.${name}`,
        problem: plan.userVariables.length === 0
          ? "this plan has no settings you can choose"
          : `not a setting of this plan (you may set ${plan.userVariables.join(", ")})`
      })
    }
    if (value.length > MAX_VALUE_LENGTH) {
      return yield* new InvalidOrderOption({ field: `options.variables.${name}`, problem: `at most ${MAX_VALUE_LENGTH} characters` })
    }
  }
  return { variables }
})

/** Egg defaults, overridden by the plan's environment, overridden by the customer's choices. */
export const environmentFor = (egg: Egg, plan: GamePlan, variables: Readonly<Record<string, string>>) => {
  const environment: Record<string, string> = {}
  for (const v of egg.variables) environment[v.envVariable] = v.defaultValue
  Object.assign(environment, plan.environment)
  for (const [name, value] of Object.entries(variables)) if (plan.userVariables.includes(name)) environment[name] = value
  return environment
}

/** Every egg rule the environment breaks, blamed on the customer's field when it is theirs, else on the plan. */
export const checkEnvironment = (egg: Egg, plan: GamePlan, variables: Readonly<Record<string, string>>) => {
  const environment = environmentFor(egg, plan, variables)
  const problems: Array<{ readonly field: string; readonly problem: string; readonly customer: boolean }> = []
  for (const v of egg.variables) {
    const problem = checkEggRules(v.rules, environment[v.envVariable])
    if (problem === undefined) continue
    const customer = Object.hasOwn(variables, v.envVariable)
    problems.push({ field: customer ? `options.variables.${v.envVariable}` : `environment.${v.envVariable}`, problem, customer })
  }
  return { environment, problems }
}
