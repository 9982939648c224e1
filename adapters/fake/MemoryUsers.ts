// In-memory Users: the same contract as the Postgres repository, for domain tests.
import { Effect, Layer, Option, Ref } from "effect"
import type { Role } from "../../domain/account/Role.ts"
import { User } from "../../domain/account/User.ts"
import { EmailTaken, Users } from "../../ports/Users.ts"

export const make = Effect.gen(function*() {
  const rows = yield* Ref.make(new Map<string, User>())
  const update = (id: string, f: (u: User) => User) =>
    Ref.modify(rows, (m): readonly [User | undefined, Map<string, User>] => {
      const current = m.get(id)
      if (current === undefined) return [undefined, m]
      const next = f(current)
      return [next, new Map(m).set(id, next)]
    })
  return Users.of({
    insert: (user) =>
      Ref.modify(rows, (m): readonly [Option.Option<User>, Map<string, User>] => {
        const email = user.email.toLowerCase()
        for (const u of m.values()) if (u.email.toLowerCase() === email) return [Option.none(), m]
        const created = new User(user)
        return [Option.some(created), new Map(m).set(user.id, created)]
      }).pipe(Effect.flatMap(Option.match({ onNone: () => Effect.fail(new EmailTaken()), onSome: Effect.succeed }))),
    findById: (id) => Effect.map(Ref.get(rows), (m) => Option.fromNullishOr(m.get(id))),
    findByEmail: (email) =>
      Effect.map(Ref.get(rows), (m) => {
        const wanted = email.toLowerCase()
        for (const u of m.values()) if (u.email.toLowerCase() === wanted) return Option.some(u)
        return Option.none()
      }),
    setPasswordHash: (id, hash) => Effect.asVoid(update(id, (u) => new User({ ...u, passwordHash: hash }))),
    upgradePasswordHash: (id, expected, next) =>
      Ref.modify(rows, (m): readonly [boolean, Map<string, User>] => {
        const current = m.get(id)
        if (current === undefined || current.passwordHash !== expected) return [false, m]
        return [true, new Map(m).set(id, new User({ ...current, passwordHash: next }))]
      }),
    setLanguage: (id, language) => Effect.asVoid(update(id, (u) => new User({ ...u, language }))),
    setRole: (id, role) =>
      Ref.modify(rows, (m): readonly [Option.Option<Role>, Map<string, User>] => {
        const current = m.get(id)
        if (current === undefined) return [Option.none(), m]
        return [Option.some(current.role), new Map(m).set(id, new User({ ...current, role }))]
      }),
    search: (query, limit) =>
      Effect.map(Ref.get(rows), (m) =>
        [...m.values()]
          .filter((u) =>
            [u.email, u.firstName, u.lastName, u.companyName ?? "", u.siret ?? ""].some((field) =>
              field !== "" && field.toLowerCase().startsWith(query)
            ))
          .sort((a, b) => (a.email.toLowerCase() < b.email.toLowerCase() ? -1 : 1))
          .slice(0, limit))
  })
})

export const layer = Layer.effect(Users, make)
