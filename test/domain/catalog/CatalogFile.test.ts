// Reading a catalog file: its schema, the checks that need only the file, CA files, and readable problems.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { decodeCatalogFile } from "../../../domain/catalog/CatalogFile.ts"
import { resolveBeside } from "../../../domain/catalog/CatalogSpec.ts"
import {
  catalogFile,
  cluster,
  files,
  gamePlan,
  ipPool,
  load,
  PEM,
  problemsOf,
  PVE_PASSWORD,
  template,
  vpsPlan
} from "./catalogMother.ts"

const decodeProblems = (text: string) => problemsOf(decodeCatalogFile(text))

describe("catalog file", () => {
  it.effect("the file of API.md loads: URLs as origins, pools as their host addresses, credentials redacted", () =>
    Effect.gen(function*() {
      const spec = yield* load(catalogFile({ proxmox: [cluster({ url: "https://pve.example:8006/" })] }))
      assert.deepStrictEqual(spec.clusters.map(({ password, ...c }) => ({ ...c, password: password === null ? null : Redacted.value(password) })), [{
        name: "pve",
        url: "https://pve.example:8006",
        username: "root@pam",
        tokenId: null,
        password: PVE_PASSWORD,
        tokenSecret: null,
        tls: { ca: null, fingerprint: null, insecure: false }
      }])
      assert.notInclude(String(spec.clusters[0]?.password), PVE_PASSWORD)
      assert.deepStrictEqual(spec.ipPools.map((p) => [p.pool.id, p.addresses.length, p.addresses[0], p.addresses.at(-1)]), [
        ["public-1", 13, "203.0.113.2", "203.0.113.14"]
      ])
      assert.deepStrictEqual(spec.plans.map((p) => p.id), ["vps-s", "mc-2g"])
      assert.deepStrictEqual(spec.templates, [{ id: "debian-12", cluster: "pve", node: "pve1", vmid: 9000, name: "Debian 12" }])
    }))

  it.effect("every section is optional, and so are the null fields, the game plan's environment and user variables", () =>
    Effect.gen(function*() {
      const spec = yield* load({
        proxmox: [{ name: "pve", url: "https://pve.example:8006", tokenId: "api@pve!zh", tokenSecret: "s", tls: { insecure: false } }],
        plans: [{ ...gamePlan(), environment: undefined, userVariables: undefined }]
      })
      assert.deepStrictEqual(spec.clusters.map((c) => [c.username, c.password, c.tls.ca, c.tls.fingerprint]), [[null, null, null, null]])
      assert.deepStrictEqual(spec.plans.map((p) => (p.kind === "game" ? [p.environment, p.userVariables] : [])), [[{}, []]])
      assert.deepStrictEqual([spec.templates, spec.ipPools, spec.panels], [[], [], []])
    }))

  it.effect("a file that is not JSON is refused with the place of the error, never the text around it", () =>
    Effect.gen(function*() {
      const text = `{\n  "proxmox": [{ "password": "hunter2-secret" "x": 1 }]\n}`
      const problems = yield* decodeProblems(text)
      assert.deepStrictEqual(problems, ["the file is not valid JSON (line 2, column 46)"])
    }))

  it.effect("schema problems name the entry and field, all of them at once, without echoing values", () =>
    Effect.gen(function*() {
      const problems = yield* decodeProblems(JSON.stringify(catalogFile({
        proxmox: [cluster({ pasword: "typo", password: 12345, tls: { caFile: null, fingerprint: null } })],
        plans: [vpsPlan({ vcpu: 0 }), vpsPlan({ kind: "vsp" }), gamePlan({ io: 5000, priceCents: -1 })]
      })))
      assert.sameMembers([...problems], [
        "proxmox[0].pasword: Expected no excess property",
        "proxmox[0].password: Expected string | null",
        "proxmox[0].tls.insecure: Missing key",
        "plans[0].vcpu: must be a whole number greater than 0",
        `plans[1]: Expected a plan of kind "vps" or "game"`,
        "plans[2].priceCents: must be a whole number, 0 or more",
        "plans[2].io: must be between 10 and 1000 (Pterodactyl's block I/O weight)"
      ])
      assert.notInclude(problems.join("\n"), "12345")
    }))

  it.effect("URLs must be https origins (http only on loopback), without path or credentials", () =>
    Effect.gen(function*() {
      const problems = yield* decodeProblems(JSON.stringify({
        proxmox: [
          cluster({ name: "a", url: "http://pve.example:8006" }),
          cluster({ name: "b", url: "https://pve.example:8006/api2/json" }),
          cluster({ name: "c", url: "https://root:pw@pve.example" }),
          cluster({ name: "d", url: "http://127.0.0.1:18006" })
        ]
      }))
      assert.deepStrictEqual(problems, [
        "proxmox[0].url: must use https:// (http:// only on a loopback address)",
        "proxmox[1].url: must be an origin, without path or query",
        "proxmox[2].url: must not contain credentials"
      ])
    }))

  it.effect("credentials must go together: password with username, token secret with token id, one of the two", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf(load({
        proxmox: [
          cluster({ name: "a", username: null }),
          cluster({ name: "b", username: null, password: null, tokenSecret: "s" }),
          cluster({ name: "c", username: "root@pam", password: "pw", tokenId: "api@pve!zh", tokenSecret: "s" })
        ]
      }))
      assert.deepStrictEqual(problems, [
        "proxmox[0].password: given without username",
        "proxmox[0]: needs username and password, or tokenId and tokenSecret",
        "proxmox[1].tokenSecret: given without tokenId",
        "proxmox[1]: needs username and password, or tokenId and tokenSecret"
      ])
    }))

  it.effect("names, template copies, VMIDs and plan ids are unique; copies of a template share its name", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf(load(catalogFile({
        proxmox: [cluster(), cluster()],
        templates: [template(), template(), template({ node: "pve2", vmid: 9000 }), template({ node: "pve3", vmid: 9003, name: "Debian" })],
        plans: [vpsPlan(), vpsPlan()]
      })))
      assert.deepStrictEqual(problems, [
        `proxmox[1].name: "pve" is already declared by proxmox[0]`,
        `templates[1]: template "debian-12" on pve/pve1 is already declared by templates[0]`,
        `templates[1].vmid: VMID 9000 on cluster "pve" is already used by templates[0]`,
        `templates[2].vmid: VMID 9000 on cluster "pve" is already used by templates[0]`,
        `templates[3].name: "Debian" differs from templates[0].name for the same template "debian-12"`,
        `plans[1].id: "vps-s" is already declared by plans[0]`
      ])
    }))

  it.effect("a pool's gateway is inside its block and neither network nor broadcast; blocks are exact and disjoint", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf(load(catalogFile({
        ipPools: [
          ipPool({ id: "p0", gateway: "203.0.113.0" }),
          ipPool({ id: "p1", cidr: "203.0.113.16/28", gateway: "203.0.113.31" }),
          ipPool({ id: "p2", cidr: "203.0.113.32/28", gateway: "198.51.100.1" }),
          ipPool({ id: "p3", cidr: "203.0.113.50/28", gateway: "203.0.113.49" }),
          ipPool({ id: "p4", cidr: "203.0.113.64/32", gateway: "203.0.113.64" }),
          ipPool({ id: "p5", cidr: "10.0.0.0/8", gateway: "10.0.0.1" }),
          ipPool({ id: "p6", cidr: "203.0.113.0/27", gateway: "203.0.113.1" })
        ]
      })))
      assert.deepStrictEqual(problems, [
        "ipPools[0].gateway: 203.0.113.0 is the network address of 203.0.113.0/28",
        "ipPools[1].gateway: 203.0.113.31 is the broadcast address of 203.0.113.16/28",
        "ipPools[2].gateway: 198.51.100.1 is outside 203.0.113.32/28",
        `ipPools[3].cidr: "203.0.113.50/28" has host bits set; the block is 203.0.113.48/28`,
        "ipPools[4].cidr: a /32 has no address left beside its gateway",
        "ipPools[5].cidr: /8 is larger than a /16; split it into several pools",
        "ipPools[6].cidr: 203.0.113.0/27 overlaps ipPools[0]"
      ])
    }))

  it.effect("TLS: insecure must be said, and cannot come with a CA or a fingerprint", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf(load({
        proxmox: [cluster({ tls: { caFile: null, fingerprint: `AB${":CD".repeat(31)}`, insecure: true } })]
      }))
      assert.deepStrictEqual(problems, ["proxmox[0].tls.insecure: true contradicts caFile/fingerprint, which would not be checked"])
    }))

  it.effect("a CA file is read beside the catalog file and kept as PEM; a fingerprint is kept in capitals", () =>
    Effect.gen(function*() {
      const fingerprint = `ab${":cd".repeat(31)}`
      const spec = yield* load(
        { proxmox: [cluster({ tls: { caFile: "certs/pve-ca.pem", fingerprint, insecure: false } })] },
        files({ "certs/pve-ca.pem": `\n${PEM}\n` })
      )
      assert.deepStrictEqual(spec.clusters[0]?.tls, { ca: PEM.trim(), fingerprint: fingerprint.toUpperCase(), insecure: false })
      assert.strictEqual(resolveBeside("/etc/zh/catalog.json", "certs/ca.pem"), "/etc/zh/certs/ca.pem")
      assert.strictEqual(resolveBeside("/etc/zh/catalog.json", "/srv/ca.pem"), "/srv/ca.pem")
      assert.strictEqual(resolveBeside("catalog.json", "ca.pem"), "ca.pem")
    }))

  it.effect("an unreadable CA file, or one without a certificate, is a problem of its entry", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf(load(
        {
          proxmox: [
            cluster({ name: "a", tls: { caFile: "missing.pem", fingerprint: null, insecure: false } }),
            cluster({ name: "b", tls: { caFile: "key.pem", fingerprint: null, insecure: false } })
          ]
        },
        files({ "key.pem": "-----BEGIN PRIVATE KEY-----\n…" })
      ))
      assert.deepStrictEqual(problems, [
        `proxmox[0].tls.caFile: cannot read "missing.pem": ENOENT: no such file or directory, open 'missing.pem'`,
        `proxmox[1].tls.caFile: "key.pem" holds no PEM certificate`
      ])
    }))
})
