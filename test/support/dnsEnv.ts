// Billing's own fakes, the in-memory engine, and one product registered — the DNS zone of dnsZoneProduct.ts, in one
// line as app/ does — with the helpers its specifications share (an order placed and paid, a zone, a record).
import { NodeCrypto } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted, Ref } from "effect"
import { WorkflowEngine } from "effect/workflow"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import * as IdentityUnitOfWork from "../../adapters/fake/IdentityUnitOfWork.ts"
import * as MemoryLedger from "../../adapters/fake/MemoryLedger.ts"
import * as MemoryOrders from "../../adapters/fake/MemoryOrders.ts"
import * as MemoryAuditLog from "../../adapters/fake/MemoryAuditLog.ts"
import * as MemoryServiceHolds from "../../adapters/fake/MemoryServiceHolds.ts"
import * as MemorySubscriptions from "../../adapters/fake/MemorySubscriptions.ts"
import { HostedServices } from "../../domain/billing/HostedService.ts"
import { viewOrder } from "../../domain/billing/Ordering.ts"
import { Subscriptions } from "../../ports/Subscriptions.ts"
import { DnsZoneHosting, dnsPlan, NameServer, ZoneRecords } from "./dnsZoneProduct.ts"
import { atOnce } from "./eventually.ts"
import { memoryInvoicing } from "./invoicing.ts"
import { promptWebCrypto } from "./promptWebCrypto.ts"
import { recordedNoticesLayer } from "./recordedNotices.ts"
import { renewalEnv } from "./renewalEnv.ts"
import { placePaidOrder, simulatedStripeLayer } from "./simulatedStripe.ts"

export const alice = "00000000-0000-4000-8000-00000000a11c"

export const dnsEnv = Layer.mergeAll(DnsZoneHosting).pipe(
  Layer.provideMerge(HostedServices.layer),
  Layer.provideMerge(WorkflowEngine.layerMemory),
  Layer.provideMerge(Layer.mergeAll(
    MemoryOrders.layer,
    MemoryAuditLog.layer,
    MemorySubscriptions.layer,
    MemoryLedger.layer,
    MemoryServiceHolds.layer,
    memoryInvoicing,
    IdentityUnitOfWork.layer,
    recordedNoticesLayer,
    NodeCrypto.layerSecureRandom,
    AesGcmSecretBox.layer({ current: Redacted.make(new Uint8Array(32).fill(3)), previous: [] }),
    simulatedStripeLayer,
    renewalEnv(),
    promptWebCrypto
  ))
)

/** Lets the in-memory workflows run (they never sleep) until `done` holds. */
export const until = <E, R>(done: Effect.Effect<boolean, E, R>) => Effect.asVoid(atOnce(done, (holds) => holds))

export const orderStatus = (orderId: string) => Effect.map(Effect.orDie(viewOrder(alice, orderId)), (view) => view.order.status)
export const subscriptionOf = (id: string) => Effect.map(Effect.flatMap(Subscriptions, (s) => s.get(id)), Option.getOrThrow)
export const zone = (name: string) => Effect.map(Effect.flatMap(NameServer, (server) => Ref.get(server.zones)), (zones) => zones.get(name))
export const recordStatus = (subscriptionId: string) =>
  Effect.map(Effect.flatMap(ZoneRecords, Ref.get), (records) => records.get(subscriptionId)?.status)

/** Alice's zone ordered, paid and provisioned (or failed). */
export const ordered = (name: string) =>
  Effect.gen(function*() {
    const order = yield* placePaidOrder(alice, dnsPlan.id, { zone: name })
    yield* until(Effect.map(orderStatus(order.id), (s) => s === "completed" || s === "failed"))
    return (yield* viewOrder(alice, order.id)).order
  })
