// Checking the customer's game settings with what the panel accepts before paying turns a panel refusal after the
// charge into a clear answer before it. What the model cannot say is left to the panel.
import type { AcceptedValue, ValueCheck } from "../../ports/GamePanel.ts"

/** The problem with `value`, or undefined when it is accepted. `value` undefined = not given. */
export const problemWith = (accepts: AcceptedValue, value: string | undefined): string | undefined => {
  if (value === undefined || value === "") return accepts.required ? "is required" : undefined
  for (const check of accepts.checks) {
    const problem = failed(check, value)
    if (problem !== undefined) return problem
  }
  return undefined
}

const sizeOf = (value: string, of: "length" | "value") => of === "value" ? Number(value) : [...value].length
const unit = (of: "length" | "value") => of === "value" ? "" : " characters"

const failed = (check: ValueCheck, value: string): string | undefined => {
  switch (check._tag) {
    case "Number":
      return /^-?\d+(\.\d+)?$/.test(value) ? undefined : "must be a number"
    case "WholeNumber":
      return /^-?\d+$/.test(value) ? undefined : "must be a whole number"
    case "TrueOrFalse":
      return ["0", "1", "true", "false"].includes(value) ? undefined : "must be true or false"
    case "LettersAndDigits":
      if (check.dashes) {
        return /^[\p{L}\p{N}_-]+$/u.test(value) ? undefined : "must contain only letters, digits, dashes and underscores"
      }
      return /^[\p{L}\p{N}]+$/u.test(value) ? undefined : "must contain only letters and digits"
    case "AtMost":
      return sizeOf(value, check.of) > check.bound ? `must be at most ${check.bound}${unit(check.of)}` : undefined
    case "AtLeast":
      return sizeOf(value, check.of) < check.bound ? `must be at least ${check.bound}${unit(check.of)}` : undefined
    case "Between": {
      const size = sizeOf(value, check.of)
      return size < check.low || size > check.high ? `must be between ${check.low} and ${check.high}` : undefined
    }
    case "OneOf":
      return check.values.includes(value) ? undefined : `must be one of ${check.values.join(", ")}`
    case "Matches":
      return check.pattern.test(value) ? undefined : "has an invalid format"
  }
}
