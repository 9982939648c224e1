// Pterodactyl validates every egg variable against a Laravel rule string (`required|string|max:20`,
// `required|regex:/^…$/`…): decoded here into what the domain reads, `AcceptedValue`. Rules the model cannot say
// are left out, so the panel judges them.
import type { AcceptedValue, ValueCheck } from "../../ports/GamePanel.ts"

export const decodeEggRules = (rules: string): AcceptedValue => {
  const parts = splitRules(rules)
  const of = isNumericRule(parts) ? "value" : "length"
  const checks: Array<ValueCheck> = []
  for (const part of parts) {
    const [name, argument = ""] = splitOnce(part, ":")
    switch (name) {
      case "numeric":
        checks.push({ _tag: "Number" })
        break
      case "integer":
        checks.push({ _tag: "WholeNumber" })
        break
      case "boolean":
        checks.push({ _tag: "TrueOrFalse" })
        break
      case "alpha_num":
        checks.push({ _tag: "LettersAndDigits", dashes: false })
        break
      case "alpha_dash":
        checks.push({ _tag: "LettersAndDigits", dashes: true })
        break
      case "max":
        checks.push({ _tag: "AtMost", bound: Number(argument), of })
        break
      case "min":
        checks.push({ _tag: "AtLeast", bound: Number(argument), of })
        break
      case "between": {
        const [low = "", high = ""] = argument.split(",")
        checks.push({ _tag: "Between", low: Number(low), high: Number(high), of })
        break
      }
      case "in":
        checks.push({ _tag: "OneOf", values: argument.split(",") })
        break
      case "regex": {
        const pattern = parseRegex(argument)
        if (pattern !== undefined) checks.push({ _tag: "Matches", pattern })
        break
      }
      default:
        break
    }
  }
  return { required: parts.includes("required"), checks }
}

const isNumericRule = (parts: ReadonlyArray<string>) => parts.includes("numeric") || parts.includes("integer")

const splitOnce = (text: string, separator: string): [string, string?] => {
  const at = text.indexOf(separator)
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)]
}

/** `|` separates rules, except inside a regex (which runs to the end of its rule: `regex:/a|b/`). */
const splitRules = (rules: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let rest = rules
  while (rest.length > 0) {
    if (rest.startsWith("regex:")) {
      // The regex ends at its closing delimiter followed by flags and then `|` or the end.
      const match = /^regex:(\/.*\/[a-z]*)(?:\||$)/.exec(rest)
      const rule = match ? `regex:${match[1]}` : rest
      out.push(rule)
      rest = rest.slice(rule.length + 1)
      continue
    }
    const at = rest.indexOf("|")
    out.push(at < 0 ? rest : rest.slice(0, at))
    rest = at < 0 ? "" : rest.slice(at + 1)
  }
  return out.map((r) => r.trim()).filter((r) => r !== "")
}

/** A PHP regex `/…/flags` as a JavaScript one; undefined when it cannot be read (the panel will judge). */
const parseRegex = (literal: string): RegExp | undefined => {
  const match = /^\/(.*)\/([a-z]*)$/s.exec(literal)
  if (!match) return undefined
  try {
    return new RegExp(match[1]!, (match[2] ?? "").replace(/[^imsu]/g, ""))
  } catch {
    return undefined
  }
}
