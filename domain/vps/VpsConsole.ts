// The VPS serial console's rules: only the owner of a running VPS opens one, and it stays open while that holds.
import { Effect, Option } from "effect"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { ownedVps, VpsUnavailable } from "./VpsActions.ts"

/** The VPS whose console `userId` may open: theirs, and running. */
export const vpsForConsole = Effect.fn("vpsForConsole")(function*(userId: string, vpsId: string) {
  const vps = yield* ownedVps(userId, vpsId)
  if (vps.status !== "running") return yield* new VpsUnavailable({ status: vps.status })
  return vps
})

/** Whether an open console of this VPS may stay open: still the owner's, still running. */
export const vpsConsoleUsable = (vpsId: string, userId: string) =>
  Effect.map(Effect.flatMap(VpsRecords, (records) => records.get(vpsId)), (current) =>
    Option.isSome(current) && current.value.status === "running" && current.value.userId === userId)
