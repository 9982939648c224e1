// Specification of e-mail normalisation and of the password policy (8..72 UTF-8 bytes, what bcrypt reads).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import { checkPasswordPolicy, normaliseEmail, parseEmail } from "../../domain/account/Credentials.ts"

const policyProblem = (password: string) =>
  Effect.map(Effect.flip(checkPasswordPolicy(Redacted.make(password))), (e) => e.problem)

const accepted = (password: string) =>
  Effect.map(Effect.exit(checkPasswordPolicy(Redacted.make(password))), Exit.isSuccess)

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length

describe("e-mail addresses", () => {
  it("are normalised by trimming and lower-casing", () => {
    assert.strictEqual(normaliseEmail("  Alice.Martin@Example.COM \n"), "alice.martin@example.com")
  })

  it.effect("parse to their normalised form", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* parseEmail(" Bob+zh@Mail.Example.org "), "bob+zh@mail.example.org")
    }))

  const malformed: ReadonlyArray<readonly [string, string]> = [
    ["", "empty"],
    ["alice.example.com", "no @"],
    ["alice@localhost", "no dot in the domain"],
    ["alice@@example.com", "two @"],
    ["ali ce@example.com", "a space inside"],
    ["@example.com", "no mailbox"],
    ["alice@", "no domain"]
  ]
  for (const [input, label] of malformed) {
    it.effect(`are refused with InvalidEmail when malformed: ${label}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(parseEmail(input))
        assert.strictEqual(error._tag, "InvalidEmail")
      }))
  }

  it.effect("may be 254 characters long, not 255", () =>
    Effect.gen(function*() {
      const at = (length: number) => `${"a".repeat(length - "@example.com".length)}@example.com`
      assert.strictEqual((yield* parseEmail(at(254))).length, 254)
      assert.strictEqual((yield* Effect.flip(parseEmail(at(255))))._tag, "InvalidEmail")
    }))
})

describe("the password policy counts UTF-8 bytes", () => {
  it.effect("accepts 8 ASCII characters", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* accepted("12345678"))
    }))

  it.effect("refuses 7 ASCII characters as TOO_SHORT", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* policyProblem("1234567"), "TOO_SHORT")
    }))

  it.effect("refuses an empty password as TOO_SHORT", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* policyProblem(""), "TOO_SHORT")
    }))

  it.effect("accepts 72 bytes", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* accepted("x".repeat(72)))
    }))

  it.effect("refuses 73 bytes as TOO_LONG, since bcrypt would silently ignore the rest", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* policyProblem("x".repeat(73)), "TOO_LONG")
    }))

  it.effect("accepts 24 euro signs: 24 characters but exactly 72 bytes", () =>
    Effect.gen(function*() {
      const password = "€".repeat(24)
      assert.strictEqual(utf8Bytes(password), 72)
      assert.isTrue(yield* accepted(password))
    }))

  it.effect("refuses 25 euro signs: only 25 characters but 75 bytes", () =>
    Effect.gen(function*() {
      const password = "€".repeat(25)
      assert.strictEqual(password.length, 25)
      assert.strictEqual(utf8Bytes(password), 75)
      assert.strictEqual(yield* policyProblem(password), "TOO_LONG")
    }))

  it.effect("accepts 4 emoji: 8 UTF-16 units but 16 bytes", () =>
    Effect.gen(function*() {
      const password = "😀".repeat(4)
      assert.strictEqual(password.length, 8)
      assert.strictEqual(utf8Bytes(password), 16)
      assert.isTrue(yield* accepted(password))
    }))

  it.effect("counts a 2-byte letter twice: 4 × é (8 bytes) is enough, 3 × é and a digit (7 bytes) are not", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* accepted("éééé"))
      assert.strictEqual(yield* policyProblem("ééé1"), "TOO_SHORT")
    }))
})
