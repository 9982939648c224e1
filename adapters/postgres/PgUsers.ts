// Users in Postgres; the unique index on lower(email) decides duplicate registrations.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Role } from "../../domain/account/Role.ts"
import { User, UserId } from "../../domain/account/User.ts"
import { EmailTaken, Users } from "../../ports/Users.ts"
import { stored } from "./failures.ts"
import { snakeColumns } from "./columns.ts"

const NewUserRow = snakeColumns(Schema.Struct(User.fields))
const UserRow = snakeColumns(User)
const decodeUsers = Schema.decodeUnknownEffect(Schema.Array(UserRow))
const PreviousRoles = Schema.Array(Schema.Struct({ previous: Role }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const insert = SqlSchema.findOne({
    Request: NewUserRow,
    Result: UserRow,
    execute: (row) => sql`INSERT INTO users ${sql.insert(row)} RETURNING *`
  })
  const byId = SqlSchema.findOneOption({
    Request: UserId,
    Result: UserRow,
    execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
  })
  const byEmail = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: UserRow,
    execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
  })

  return Users.of({
    insert: (user) =>
      insert(user).pipe(
        Effect.catchIf((e) => e._tag === "SqlError" && e.reason._tag === "UniqueViolation", () => Effect.fail(new EmailTaken())),
        stored
      ),
    findById: (id) => byId(id).pipe(stored),
    findByEmail: (email) => byEmail(email).pipe(stored),
    setPasswordHash: (id, hash) =>
      sql`UPDATE users SET password_hash = ${hash} WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    upgradePasswordHash: (id, expected, next) =>
      sql`UPDATE users SET password_hash = ${next} WHERE id = ${id} AND password_hash = ${expected} RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        stored
      ),
    setLanguage: (id, language) => sql`UPDATE users SET language = ${language} WHERE id = ${id}`.pipe(Effect.asVoid, stored),
    setRole: (id, role) =>
      // The row is locked by the subquery: two grants at once each see the role the other left.
      sql`UPDATE users SET role = ${role}
          FROM (SELECT id, role AS previous FROM users WHERE id = ${id} FOR UPDATE) old
          WHERE users.id = old.id RETURNING old.previous`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(PreviousRoles)),
        Effect.map((rows) => Option.fromNullishOr(rows[0]?.previous)),
        stored
      ),
    search: (query, limit) => {
      // Each branch is a range of one prefix index (migration 14) that stops at `limit` rows; LIKE's own wildcards in
      // the query are literal. The first `limit` of those by e-mail are kept: a query as broad as a common last name
      // (2,000 of 100,000 customers) shows `limit` of its matches, read in about a millisecond (bench "scale"), instead
      // of all of them sorted first.
      const prefix = `${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
      return sql`SELECT * FROM users WHERE id IN (
                   (SELECT id FROM users WHERE lower(email) LIKE ${prefix} LIMIT ${limit})
                   UNION ALL (SELECT id FROM users WHERE lower(last_name) LIKE ${prefix} LIMIT ${limit})
                   UNION ALL (SELECT id FROM users WHERE lower(first_name) LIKE ${prefix} LIMIT ${limit})
                   UNION ALL (SELECT id FROM users WHERE lower(company_name) LIKE ${prefix} LIMIT ${limit})
                   UNION ALL (SELECT id FROM users WHERE siret LIKE ${prefix} LIMIT ${limit}))
                 ORDER BY lower(email) LIMIT ${limit}`.pipe(Effect.flatMap(decodeUsers), stored)
    }
  })
})

export const layer = Layer.effect(Users, make)
