// What a customer chooses when ordering a game server (`{ variables?: { NAME: value } }`), checked against the
// plan (only its `userVariables`) and what the egg accepts, and the environment the panel server is created with.
import { Effect, Schema } from "effect"
import { type Egg, GamePanel } from "../../ports/GamePanel.ts"
import type { GamePlan } from "../catalog/Plan.ts"
import { InvalidOrderOption, PlanUnavailable, ProductUnavailable } from "../billing/BillingErrors.ts"
import { problemWith } from "./acceptedValue.ts"

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

/** Every egg variable the environment gives a value it does not accept, blamed on the customer's field when it is theirs, else on the plan. */
export const checkEnvironment = (egg: Egg, plan: GamePlan, variables: Readonly<Record<string, string>>) => {
  const environment = environmentFor(egg, plan, variables)
  const problems: Array<{ readonly field: string; readonly problem: string; readonly customer: boolean }> = []
  for (const v of egg.variables) {
    const problem = problemWith(v.accepts, environment[v.envVariable])
    if (problem === undefined) continue
    const customer = Object.hasOwn(variables, v.envVariable)
    problems.push({ field: customer ? `options.variables.${v.envVariable}` : `environment.${v.envVariable}`, problem, customer })
  }
  return { environment, problems }
}

/**
 * The customer's settings are checked against the plan and against what the egg accepts (read from the panel)
 * before anything is charged; the plan's own values are the operator's business (a misconfigured plan fails
 * its provisioning with a clear reason and a refund).
 */
export const validateGameOptions = Effect.fn("validateGameOptions")(function*(plan: GamePlan, raw: unknown) {
  const options = yield* decodeGameOptions(plan, raw)
  if (Object.keys(options.variables).length === 0) return options
  const egg = yield* (yield* GamePanel).egg(plan.panel, plan.eggId).pipe(
    Effect.catchTag("PanelResourceNotFound", () => Effect.fail(new PlanUnavailable({ planId: plan.id }))),
    Effect.catchTag(["GamePanelUnavailable", "PanelUnknown"], () => Effect.fail(panelUnavailable)),
    Effect.catchTag("GamePanelThrottled", (e) =>
      Effect.fail(
        new ProductUnavailable({
          code: "GAME_PANEL_BUSY",
          busy: true,
          description: "The game panel is busy; please try again in a moment.",
          retryAfterSeconds: e.retryAfterSeconds
        })
      ))
  )
  const problem = checkEnvironment(egg, plan, options.variables).problems.find((p) => p.customer)
  if (problem !== undefined) return yield* new InvalidOrderOption({ field: problem.field, problem: problem.problem })
  return options
})

const panelUnavailable = new ProductUnavailable({
  code: "GAME_PANEL_UNAVAILABLE",
  busy: false,
  description: "The game panel did not complete the operation; please try again shortly."
})
