// The customer's payments as our ledger records them: charges (first months and renewals) and refunds.
import { Effect } from "effect"
import { Ledger } from "../../ports/Ledger.ts"

/** The newest 100: a history page, not an export (invoices are the record of account). */
export const listPayments = (userId: string) => Effect.flatMap(Ledger, (ledger) => ledger.forUser(userId, 100))
