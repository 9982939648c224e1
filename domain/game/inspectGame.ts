// A game server as the panel holds it now, for an operator beside our record: its state on the panel (installed,
// suspended, …), whether the server there is still the one made for our order, and where it runs. A panel that does
// not answer in time is "unreachable", never a failure of the page.
import { Effect, Option } from "effect"
import { inspectedWithin, type ServiceInspection } from "../billing/HostedService.ts"
import { GamePanel } from "../../ports/GamePanel.ts"
import { GameServerRecords } from "../../ports/GameServerRecords.ts"

export const inspectGame = (subscriptionId: string) =>
  Effect.gen(function*() {
    const server = yield* (yield* GameServerRecords).bySubscription(subscriptionId)
    if (Option.isNone(server)) return Option.none<ServiceInspection>()
    if (server.value.status === "deleted") {
      return Option.some<ServiceInspection>({ reachable: true, upstream: "pterodactyl", state: "deleted", ownership: "gone", facts: [] })
    }
    const record = server.value
    const live = (yield* GamePanel).server(record.panel, record.panelServerId).pipe(
      Effect.map((found): ServiceInspection => ({
        reachable: true,
        upstream: "pterodactyl",
        // The panel's `status` null means installed and not suspended (reference/pterodactyl.md).
        state: found.suspended ? "suspended" : found.state,
        ownership: found.orderId === record.orderId ? "ours" : "foreign",
        facts: [["panel", record.panel], ["server", String(found.id)], ["identifier", found.identifier], ["node", String(found.node)], ["name", found.name]]
      })),
      Effect.catchTag("PanelResourceNotFound", () =>
        Effect.succeed<ServiceInspection>({
          reachable: true,
          upstream: "pterodactyl",
          state: "missing",
          ownership: "gone",
          facts: [["panel", record.panel], ["server", String(record.panelServerId)]]
        }))
    )
    return Option.some(yield* inspectedWithin("pterodactyl", live))
  })
