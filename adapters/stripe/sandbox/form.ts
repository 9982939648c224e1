// Stripe's request encoding (form bodies and query strings alike): `a[b][0][c]=v` pairs, as the SDK writes them
// (stripe-node utils.ts `stringifyRequestData`: nested objects in brackets, arrays by index, `expand[]` too).
export type FormValue = string | FormTree | ReadonlyArray<FormValue>
export interface FormTree {
  readonly [key: string]: FormValue
}

type Mutable = Record<string, unknown>

const keyPath = (key: string): ReadonlyArray<string> | undefined => {
  const head = /^[^[\]]+/.exec(key)
  if (head === null) return undefined
  const rest = key.slice(head[0].length)
  const parts = [head[0]]
  const bracket = /\[([^[\]]*)\]/gy
  let consumed = 0
  for (let m = bracket.exec(rest); m !== null; m = bracket.exec(rest)) {
    parts.push(m[1] ?? "")
    consumed = bracket.lastIndex
  }
  return consumed === rest.length ? parts : undefined
}

// Objects whose keys are all indices (0, 1, …) are arrays; `expand[]` appends.
const finish = (value: unknown): FormValue => {
  if (typeof value === "string") return value
  const entries = Object.entries(value as Mutable)
  const indexed = entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k))
  if (indexed) return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => finish(v))
  return Object.fromEntries(entries.map(([k, v]) => [k, finish(v)]))
}

/** Decodes `a[b][0]=v&…` into nested records and arrays of strings; malformed keys are kept as plain keys. */
export const parseForm = (params: URLSearchParams): FormTree => {
  const root: Mutable = {}
  for (const [key, value] of params) {
    const path = keyPath(key) ?? [key]
    let node = root
    path.forEach((part, i) => {
      const name = part === "" ? String(Object.keys(node).length) : part
      if (i === path.length - 1) {
        node[name] = value
        return
      }
      const next = node[name]
      if (typeof next !== "object" || next === null) node[name] = {}
      node = node[name] as Mutable
    })
  }
  return finish(root) as FormTree
}

/** A canonical text of the parameters, to compare two requests made under one idempotency key. */
export const fingerprint = (method: string, path: string, params: URLSearchParams): string =>
  `${method} ${path} ${[...params].map(([k, v]) => `${k}=${v}`).sort().join("&")}`
