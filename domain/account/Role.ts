// What a user may do on the platform: a customer manages their own services; support reads everything and may
// suspend, unsuspend and resend e-mails; an admin may do everything. Staff (support and admin) hold shorter sessions.
import { Schema } from "effect"

export const Role = Schema.Literals(["customer", "support", "admin"])
export type Role = typeof Role.Type

export const StaffRole = Schema.Literals(["support", "admin"])
export type StaffRole = typeof StaffRole.Type

const RANK: Record<Role, number> = { customer: 0, support: 1, admin: 2 }

export const isStaff = (role: Role): role is StaffRole => role !== "customer"

/** Whether `role` may do what needs `required` (an admin may do whatever support may). */
export const mayAct = (role: Role, required: StaffRole): boolean => RANK[role] >= RANK[required]
