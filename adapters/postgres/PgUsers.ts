// Users in Postgres; the unique index on lower(email) decides duplicate registrations.
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { User, UserId } from "../../domain/account/User.ts"
import { EmailTaken, Users } from "../../ports/Users.ts"

const UserRow = Schema.Struct({
  id: UserId,
  email: Schema.String,
  account_type: Schema.Literals(["personal", "professional"]),
  first_name: Schema.String,
  last_name: Schema.String,
  company_name: Schema.NullOr(Schema.String),
  siret: Schema.NullOr(Schema.String),
  language: Schema.Literals(["fr", "en"]),
  password_hash: Schema.String,
  created_at: Schema.Date
})

const toUser = (r: typeof UserRow.Type): User =>
  new User({
    id: r.id,
    email: r.email,
    accountType: r.account_type,
    firstName: r.first_name,
    lastName: r.last_name,
    companyName: r.company_name,
    siret: r.siret,
    language: r.language,
    passwordHash: r.password_hash,
    createdAt: r.created_at
  })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const byId = SqlSchema.findOneOption({
    Request: Schema.String,
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
      sql`INSERT INTO users ${sql.insert({
        id: user.id,
        email: user.email,
        account_type: user.accountType,
        first_name: user.firstName,
        last_name: user.lastName,
        company_name: user.companyName,
        siret: user.siret,
        language: user.language,
        password_hash: user.passwordHash,
        created_at: user.createdAt
      })} RETURNING *`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(UserRow))),
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.die("INSERT returned no row") : Effect.succeed(toUser(rows[0]))),
        Effect.catchTag("SqlError", (e) => e.reason._tag === "UniqueViolation" ? Effect.fail(new EmailTaken()) : Effect.die(e)),
        Effect.catchTag("SchemaError", Effect.die)
      ),
    findById: (id) => byId(id).pipe(Effect.map(Option.map(toUser)), Effect.orDie),
    findByEmail: (email) => byEmail(email).pipe(Effect.map(Option.map(toUser)), Effect.orDie),
    setPasswordHash: (id, hash) =>
      sql`UPDATE users SET password_hash = ${hash} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    upgradePasswordHash: (id, expected, next) =>
      sql`UPDATE users SET password_hash = ${next} WHERE id = ${id} AND password_hash = ${expected} RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      ),
    setLanguage: (id, language) => sql`UPDATE users SET language = ${language} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(Users, make)
