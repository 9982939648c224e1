// Pterodactyl validates every egg variable against a Laravel rule string (`required|string|max:20`,
// `required|regex:/^…$/`…). Checking the customer's values with the same rules before paying turns a panel 422
// after the charge into a clear answer before it. Rules we do not know are left to the panel.

/** The problem with `value` under `rules`, or undefined when it passes. `value` undefined = not given. */
export const checkEggRules = (rules: string, value: string | undefined): string | undefined => {
  const parts = splitRules(rules)
  if (value === undefined || value === "") {
    if (parts.includes("required")) return "is required"
    return undefined
  }
  for (const part of parts) {
    const [name, argument = ""] = splitOnce(part, ":")
    switch (name) {
      case "string":
        break
      case "numeric":
        if (!/^-?\d+(\.\d+)?$/.test(value)) return "must be a number"
        break
      case "integer":
        if (!/^-?\d+$/.test(value)) return "must be a whole number"
        break
      case "boolean":
        if (!["0", "1", "true", "false"].includes(value)) return "must be true or false"
        break
      case "alpha_num":
        if (!/^[\p{L}\p{N}]+$/u.test(value)) return "must contain only letters and digits"
        break
      case "alpha_dash":
        if (!/^[\p{L}\p{N}_-]+$/u.test(value)) return "must contain only letters, digits, dashes and underscores"
        break
      case "max": {
        const bound = Number(argument)
        if (isNumericRule(parts) ? Number(value) > bound : [...value].length > bound) return `must be at most ${argument}${isNumericRule(parts) ? "" : " characters"}`
        break
      }
      case "min": {
        const bound = Number(argument)
        if (isNumericRule(parts) ? Number(value) < bound : [...value].length < bound) return `must be at least ${argument}${isNumericRule(parts) ? "" : " characters"}`
        break
      }
      case "between": {
        const [low = "", high = ""] = argument.split(",")
        const size = isNumericRule(parts) ? Number(value) : [...value].length
        if (size < Number(low) || size > Number(high)) return `must be between ${low} and ${high}`
        break
      }
      case "in":
        if (!argument.split(",").includes(value)) return `must be one of ${argument.split(",").join(", ")}`
        break
      case "regex": {
        const pattern = parseRegex(argument)
        if (pattern !== undefined && !pattern.test(value)) return "has an invalid format"
        break
      }
      default:
        break
    }
  }
  return undefined
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
