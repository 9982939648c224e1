// The dependency-rule check itself: it must catch each kind of violation and pass the real tree.
import { describe, expect, it } from "vitest"
import { join } from "node:path"
import { checkFile, checkTree, importsOf } from "../../.ci/check-deps.ts"

describe("dependency rule check", () => {
  it("the project tree obeys the rule", () => {
    expect(checkTree(join(import.meta.dirname, "..", ".."))).toEqual([])
  })

  it("domain/ may import effect and ports/, nothing else", () => {
    expect(checkFile("domain/a/A.ts", `import { Effect } from "effect"\nimport { X } from "../../ports/X.ts"`)).toEqual([])
    expect(checkFile("domain/a/A.ts", `import { readFile } from "node:fs"`)).toHaveLength(1)
    expect(checkFile("domain/a/A.ts", `import { PgClient } from "@effect/sql-pg"`)).toHaveLength(1)
    expect(checkFile("domain/a/A.ts", `import * as H from "../../adapters/http/Api.ts"`)).toHaveLength(1)
    expect(checkFile("domain/a/A.ts", `const m = await import("../../app/Config.ts")`)).toHaveLength(1)
  })

  it("ports/ may import domain/ only for types", () => {
    expect(checkFile("ports/P.ts", `import type { User } from "../domain/account/User.ts"`)).toEqual([])
    expect(checkFile("ports/P.ts", `import { type User, type UserId } from "../domain/account/User.ts"`)).toEqual([])
    expect(checkFile("ports/P.ts", `import { User } from "../domain/account/User.ts"`)).toHaveLength(1)
    expect(checkFile("ports/P.ts", `import { x } from "jose"`)).toHaveLength(1)
  })

  it("an adapter never imports another adapter or app/", () => {
    expect(checkFile("adapters/http/A.ts", `import { B } from "./B.ts"`)).toEqual([])
    expect(checkFile("adapters/http/A.ts", `import { PgUsers } from "../postgres/PgUsers.ts"`)).toHaveLength(1)
    expect(checkFile("adapters/http/A.ts", `export { S } from "../../app/Config.ts"`)).toHaveLength(1)
  })

  it("reads every import form", () => {
    const refs = importsOf(`import "a"\nimport type { B } from "b"\nexport * from "c"\nconst d = import("d")`)
    expect(refs.map((r) => r.specifier).sort()).toEqual(["a", "b", "c", "d"])
    expect(refs.find((r) => r.specifier === "b")?.typeOnly).toBe(true)
  })
})
