// Specification of SIRET checking: the test vectors of reference/business-registry.md §2.3, normalisation,
// and the difference between a malformed number and one that fails its checksum.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { isValidSiret, luhn, normaliseSiret, parseSiret } from "../../domain/account/Siret.ts"

const digitSum = (digits: string) => [...digits].reduce((sum, c) => sum + Number(c), 0)

const problemOf = (input: string) => {
  const parsed = parseSiret(input)
  return Result.isFailure(parsed) ? parsed.failure : undefined
}

describe("SIRET test vectors (business-registry.md §2.3)", () => {
  const valid: ReadonlyArray<readonly [string, string]> = [
    ["55208131766522", "EDF head office"],
    ["44306184100047", "Google France head office"],
    ["35600000000048", "La Poste head office (plain Luhn)"],
    ["35600000049837", "La Poste establishment (digit-sum rule only)"],
    ["73282932000074", "common format example"]
  ]
  const invalid: ReadonlyArray<readonly [string, string]> = [
    ["12345678912345", "classic bad checksum"],
    ["12345678901234", "bad checksum"],
    ["73282932000075", "last digit altered"],
    ["55208131766523", "EDF with last digit altered"],
    ["35600000000049", "La Poste prefix, Luhn fails and digit sum 27"],
    ["54206547900022", "mislabelled 'Google France'"]
  ]

  for (const [siret, label] of valid) {
    it(`${siret} is valid: ${label}`, () => {
      assert.isTrue(isValidSiret(siret))
      const parsed = parseSiret(siret)
      assert.isTrue(Result.isSuccess(parsed) && parsed.success === siret)
    })
  }

  for (const [siret, label] of invalid) {
    it(`${siret} is refused for its checksum: ${label}`, () => {
      assert.isFalse(isValidSiret(siret))
      assert.strictEqual(problemOf(siret), "SIRET_CHECKSUM")
    })
  }
})

describe("the La Poste exception", () => {
  it("La Poste's head office is an ordinary Luhn number whose digit sum is not a multiple of 5", () => {
    assert.isTrue(luhn("35600000000048"))
    assert.strictEqual(digitSum("35600000000048") % 5, 1)
    assert.isTrue(isValidSiret("35600000000048"))
  })

  it("a La Poste establishment failing Luhn is valid when its digit sum is a multiple of 5", () => {
    assert.isFalse(luhn("35600000049837"))
    assert.strictEqual(digitSum("35600000049837"), 45)
    assert.isTrue(isValidSiret("35600000049837"))
  })

  it("the digit-sum rule is La Poste's alone: another SIREN failing Luhn with a sum divisible by 5 is refused", () => {
    // 55208131766524: EDF's SIREN, Luhn fails, digit sum 55.
    assert.isFalse(luhn("55208131766524"))
    assert.strictEqual(digitSum("55208131766524") % 5, 0)
    assert.isFalse(isValidSiret("55208131766524"))
  })
})

describe("the SIREN inside the SIRET", () => {
  it("a SIRET whose 14 digits pass Luhn but whose SIREN does not is refused", () => {
    const siret = "88800012300008"
    assert.isTrue(luhn(siret))
    assert.isFalse(luhn(siret.slice(0, 9)))
    assert.isFalse(isValidSiret(siret))
    assert.strictEqual(problemOf(siret), "SIRET_CHECKSUM")
  })
})

describe("normalisation", () => {
  it("strips spaces, dots and dashes the way users type SIRETs", () => {
    for (const typed of ["552 081 317 66522", "552.081.317.66522", "552-081-317-66522", " 552\t081 317-665.22 "]) {
      assert.strictEqual(normaliseSiret(typed), "55208131766522", typed)
      const parsed = parseSiret(typed)
      assert.isTrue(Result.isSuccess(parsed) && parsed.success === "55208131766522", typed)
    }
  })

  it("keeps every other character, so letters still make the format wrong", () => {
    assert.strictEqual(normaliseSiret("552/081/317"), "552/081/317")
    assert.strictEqual(problemOf("552/081/317/66522"), "SIRET_FORMAT")
  })
})

describe("format problems come before checksum problems", () => {
  const malformed: ReadonlyArray<readonly [string, string]> = [
    ["", "empty"],
    ["5520813176652", "13 digits"],
    ["552081317665220", "15 digits"],
    ["5520813176652A", "a letter"],
    ["552_081_317_66522", "an underscore separator"],
    ["５５２０８１３１７６６５２２", "full-width digits"]
  ]
  for (const [input, label] of malformed) {
    it(`${label} is a SIRET_FORMAT problem`, () => {
      assert.strictEqual(problemOf(input), "SIRET_FORMAT")
      assert.isFalse(isValidSiret(input))
    })
  }

  it("fourteen digits with a wrong check digit is a SIRET_CHECKSUM problem", () => {
    assert.strictEqual(problemOf("552 081 317 66523"), "SIRET_CHECKSUM")
  })
})
