// The sandbox's hand-written parameter table must say what Proxmox's own API schema says, endpoint by endpoint
// and parameter by parameter, so the simulator's 400s cannot drift from a real PVE's.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { apiSchema, type ParamSpec } from "../../../adapters/proxmox/sandbox/apiSchema.ts"
import { SUBSET_FILE, subsetNodes } from "../../fixtures/proxmox-apidoc/subset.ts"

interface DocNode {
  readonly path: string
  readonly info?: Readonly<Record<string, { readonly parameters?: { readonly additionalProperties?: number; readonly properties?: Readonly<Record<string, Readonly<Record<string, unknown>>>> } }>>
  readonly children?: ReadonlyArray<DocNode>
}

const isDocNode = (u: unknown): u is DocNode =>
  typeof u === "object" && u !== null && "path" in u && typeof u.path === "string"

const index = new Map<string, DocNode>()
const walk = (node: unknown) => {
  if (!isDocNode(node)) return
  index.set(node.path, node)
  for (const child of node.children ?? []) walk(child)
}
// The schema's entries for the repository's endpoints (test/fixtures/proxmox-apidoc/, made from reference/proxmox-apidoc.json).
for (const root of subsetNodes(readFileSync(SUBSET_FILE, "utf8"))) walk(root)

const num = (u: unknown) => (u === undefined ? undefined : Number(u))

/** The apidoc entry reduced to what the table records. */
const expected = (doc: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const description = typeof doc["description"] === "string" ? doc["description"] : ""
  return {
    type: doc["type"],
    optional: doc["optional"] === 1 || doc["optional"] === "1",
    minimum: num(doc["minimum"]),
    maximum: num(doc["maximum"]),
    minLength: num(doc["minLength"]),
    maxLength: num(doc["maxLength"]),
    pattern: doc["pattern"],
    enum: doc["enum"],
    format: typeof doc["format"] === "string" ? doc["format"] : undefined,
    propertyString: typeof doc["format"] === "object" && doc["format"] !== null,
    requires: doc["requires"],
    describedMaxIndex: num(/\(n is 0 to (\d+)/.exec(description)?.[1])
  }
}

const actual = (spec: ParamSpec): Record<string, unknown> => ({
  type: spec.type,
  optional: spec.optional === true,
  minimum: spec.minimum,
  maximum: spec.maximum,
  minLength: spec.minLength,
  maxLength: spec.maxLength,
  pattern: spec.pattern,
  enum: spec.enum,
  format: spec.format,
  propertyString: spec.propertyString === true,
  requires: spec.requires
})

describe("the sandbox's parameter table", () => {
  it("was read against a parsed apidoc holding every endpoint of the table", () => {
    expect(index.size).toBeGreaterThan(20)
    for (const endpoint of apiSchema) expect(index.get(endpoint.path)?.info?.[endpoint.method], endpoint.path).toBeDefined()
  })

  for (const endpoint of apiSchema) {
    it(`matches the apidoc for ${endpoint.method} ${endpoint.path}`, () => {
      const info = index.get(endpoint.path)?.info?.[endpoint.method]
      expect(info, "endpoint present in the apidoc").toBeDefined()
      expect(info?.parameters?.additionalProperties ?? 0).toBe(0)
      const docParams = info?.parameters?.properties ?? {}
      expect(Object.keys(endpoint.params).sort()).toEqual(Object.keys(docParams).sort())
      for (const [name, doc] of Object.entries(docParams)) {
        const spec = endpoint.params[name]
        if (spec === undefined) continue
        const { describedMaxIndex, ...want } = expected(doc)
        expect(actual(spec), `${endpoint.method} ${endpoint.path} ${name}`).toEqual(want)
        if (name.endsWith("[n]")) {
          expect(spec.maxIndex, `${name} has an index range`).toBeDefined()
          if (describedMaxIndex !== undefined) expect(spec.maxIndex ?? -1).toBeGreaterThanOrEqual(Number(describedMaxIndex))
        } else {
          expect(spec.maxIndex, `${name} is not indexed`).toBeUndefined()
        }
      }
    })
  }
})
