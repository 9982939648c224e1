// Granting and revoking the operators' roles (`npm run admin -- users grant|revoke`): the change and its audit row
// commit together. The user's role is read on every request, so it applies to sessions already open within a second.
import { Effect, Option, Schema } from "effect"
import { UnitOfWork } from "../../ports/UnitOfWork.ts"
import { Users } from "../../ports/Users.ts"
import { recordAudit } from "../audit/record.ts"
import { normaliseEmail } from "./Credentials.ts"
import type { Role, StaffRole } from "./Role.ts"

export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", { email: Schema.String }) {
  override get message() {
    return `No account is registered under ${this.email}.`
  }
}

const changeRole = (email: string, role: Role) =>
  Effect.gen(function*() {
    const users = yield* Users
    const address = normaliseEmail(email)
    const user = yield* users.findByEmail(address)
    if (Option.isNone(user)) return yield* new UserNotFound({ email: address })
    const id = user.value.id
    return yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
      const previous = yield* users.setRole(id, role)
      // Deleted between the lookup and the update: as if it never existed.
      if (Option.isNone(previous)) return yield* new UserNotFound({ email: address })
      if (previous.value !== role) {
        yield* recordAudit({
          actorId: null,
          actorRole: "system",
          action: role === "customer" ? "staff.role_revoked" : "staff.role_granted",
          subjectUserId: id,
          target: { type: "user", id },
          before: { role: previous.value },
          after: { role },
          details: { via: "cli" }
        })
      }
      return { user: user.value, previous: previous.value }
    }))
  })

/** Makes the account at `email` support or admin; the role it held before. */
export const grantRole = Effect.fn("grantRole")(function*(email: string, role: StaffRole) {
  return yield* changeRole(email, role)
})

/** Makes the account at `email` a customer again; the role it held before. */
export const revokeRole = Effect.fn("revokeRole")(function*(email: string) {
  return yield* changeRole(email, "customer")
})
