// The sandbox payment gateway: approves every charge (idempotently, by key) unless told to decline, so the whole
// order flow can be clicked through and tested without a payment provider. It stands for an external provider, so
// what it took outlives our processes: `layerSql` keeps its charges and refunds in the database (every instance sees
// them, as every instance sees a real provider); `layer` keeps them in memory, for tests of one process. It has no
// hosted pages and keeps no card: a checkout is approved at once (the page's URL is the success URL), and it sends no
// notifications (every one presented to it is refused). Wired only in sandbox mode.
import { Context, Duration, Effect, Layer, Option, Ref, Schema } from "effect"
import { SecureRandom } from "effect/crypto"
import { SqlClient } from "effect/sql"
import { NotificationSignatureInvalid, PaymentDeclined, PaymentGateway } from "../../ports/PaymentGateway.ts"

export interface SandboxCharge {
  readonly reference: string
  readonly customer: string
  readonly amountCents: number
  readonly description: string
  readonly refunded: boolean
}

/** Operator and test control of the sandbox gateway. */
export class SandboxPayments extends Context.Service<SandboxPayments, {
  /** Declines the next `count` charges (with `reason`). */
  declineNext(count: number, reason?: string): Effect.Effect<void>
  /** Declines every charge from now on, or stops doing so. */
  declineAll(decline: boolean): Effect.Effect<void>
  readonly charges: Effect.Effect<ReadonlyArray<SandboxCharge>>
}>()("zh/payments/SandboxPayments") {}

export interface SandboxGatewayOptions {
  readonly declineAll?: boolean
  /**
   * How long the provider takes before and again after taking a charge (0 by default): a slow provider, so a test
   * can interrupt an order between the charge and our record of it.
   */
  readonly chargeLatency?: Duration.Input
}

interface NewCharge {
  readonly reference: string
  readonly idempotencyKey: string
  readonly customer: string
  readonly amountCents: number
  readonly description: string
}

interface NewRefund {
  readonly reference: string
  readonly idempotencyKey: string
  readonly charge: string
  readonly amountCents: number
}

/** Where the provider keeps what it did; each operation is atomic per idempotency key. */
interface Store {
  /** The reference already recorded under the key, if any. */
  byKey(idempotencyKey: string): Effect.Effect<Option.Option<{ readonly reference: string; readonly amountCents: number }>>
  /** Records the charge unless its key is known; answers the reference that holds for the key. */
  charge(charge: NewCharge): Effect.Effect<string>
  refund(refund: NewRefund): Effect.Effect<string>
  readonly charges: Effect.Effect<ReadonlyArray<SandboxCharge>>
}

interface MemoryState {
  readonly byKey: ReadonlyMap<string, { readonly reference: string; readonly amountCents: number }>
  readonly charges: ReadonlyMap<string, SandboxCharge>
}

const memoryStore = Effect.map(Ref.make<MemoryState>({ byKey: new Map(), charges: new Map() }), (state): Store => ({
  byKey: (key) => Effect.map(Ref.get(state), (s) => Option.fromNullishOr(s.byKey.get(key))),
  charge: (c) =>
    Ref.modify(state, (s): readonly [string, MemoryState] => {
      const known = s.byKey.get(c.idempotencyKey)
      if (known !== undefined) return [known.reference, s]
      const charge: SandboxCharge = { ...c, refunded: false }
      return [c.reference, {
        byKey: new Map(s.byKey).set(c.idempotencyKey, { reference: c.reference, amountCents: c.amountCents }),
        charges: new Map(s.charges).set(c.reference, charge)
      }]
    }),
  refund: (r) =>
    Ref.modify(state, (s): readonly [string, MemoryState] => {
      const known = s.byKey.get(r.idempotencyKey)
      if (known !== undefined) return [known.reference, s]
      const charge = s.charges.get(r.charge)
      return [r.reference, {
        byKey: new Map(s.byKey).set(r.idempotencyKey, { reference: r.reference, amountCents: r.amountCents }),
        charges: charge === undefined ? s.charges : new Map(s.charges).set(charge.reference, { ...charge, refunded: true })
      }]
    }),
  charges: Effect.map(Ref.get(state), (s) => [...s.charges.values()])
}))

const KeyRows = Schema.Array(Schema.Struct({ reference: Schema.String, amount_cents: Schema.Int }))
const ChargeRows = Schema.Array(Schema.Struct({
  reference: Schema.String,
  customer: Schema.String,
  amount_cents: Schema.Int,
  description: Schema.String,
  refunded: Schema.Boolean
}))

/** The `sandbox_payments` table (migration 7): a replayed key finds the first call's row (UNIQUE idempotency_key). */
const sqlStore = Effect.map(SqlClient.SqlClient, (sql): Store => {
  const byKey = (key: string) =>
    sql`SELECT reference, amount_cents FROM sandbox_payments WHERE idempotency_key = ${key}`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(KeyRows)),
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => ({ reference: r.reference, amountCents: r.amount_cents }))),
      Effect.orDie
    )
  const insert = (row: Record<string, string | number | null>, key: string) =>
    sql`INSERT INTO sandbox_payments ${sql.insert(row)} ON CONFLICT (idempotency_key) DO NOTHING`.pipe(
      Effect.andThen(byKey(key)),
      Effect.flatMap(Option.match({
        onNone: () => Effect.die(new Error(`sandbox payment ${key} vanished`)),
        onSome: (found) => Effect.succeed(found.reference)
      })),
      Effect.orDie
    )
  return {
    byKey,
    charge: (c) =>
      insert({
        reference: c.reference,
        kind: "charge",
        idempotency_key: c.idempotencyKey,
        customer: c.customer,
        amount_cents: c.amountCents,
        description: c.description
      }, c.idempotencyKey),
    refund: (r) =>
      insert({
        reference: r.reference,
        kind: "refund",
        idempotency_key: r.idempotencyKey,
        charge: r.charge,
        amount_cents: r.amountCents
      }, r.idempotencyKey),
    charges: sql`SELECT c.reference, c.customer, c.amount_cents, c.description,
                        EXISTS (SELECT 1 FROM sandbox_payments r WHERE r.charge = c.reference) AS refunded
                 FROM sandbox_payments c WHERE c.kind = 'charge' ORDER BY c.created_at, c.reference`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(ChargeRows)),
      Effect.map((rows) =>
        rows.map((r): SandboxCharge => ({
          reference: r.reference,
          customer: r.customer,
          amountCents: r.amount_cents,
          description: r.description,
          refunded: r.refunded
        }))
      ),
      Effect.orDie
    )
  }
})

interface Declining {
  readonly next: number
  readonly all: boolean
  readonly reason: string
}

const gatewayOn = (store: Store, options: SandboxGatewayOptions) =>
  Effect.gen(function*() {
    const random = yield* SecureRandom.SecureRandom
    const declining = yield* Ref.make<Declining>({ next: 0, all: options.declineAll ?? false, reason: "card declined (sandbox)" })
    const latency = Duration.fromInputUnsafe(options.chargeLatency ?? 0)
    const pause = Duration.isZero(latency) ? Effect.void : Effect.sleep(latency)
    const fresh = (prefix: string) => Effect.map(random.uuidV4(), (id) => `${prefix}_${id.replace(/-/g, "")}`)
    const gateway = PaymentGateway.of({
      ready: Effect.void,
      charge: (request) =>
        Effect.gen(function*() {
          yield* pause
          const known = yield* store.byKey(request.idempotencyKey)
          if (Option.isSome(known)) return { reference: known.value.reference }
          const declined = yield* Ref.modify(declining, (d): readonly [PaymentDeclined | null, Declining] =>
            d.all || d.next > 0 ? [new PaymentDeclined({ reason: d.reason }), { ...d, next: Math.max(0, d.next - 1) }] : [null, d])
          if (declined !== null) return yield* declined
          const reference = yield* store.charge({ ...request, reference: yield* fresh("ch") })
          yield* pause
          return { reference }
        }),
      createCustomer: (request) => Effect.succeed({ customer: `cus_sandbox_${request.userId}` }),
      checkout: (request) =>
        Effect.gen(function*() {
          const known = yield* store.byKey(request.idempotencyKey)
          if (Option.isNone(known)) {
            yield* store.charge({
              reference: yield* fresh("ch"),
              idempotencyKey: request.idempotencyKey,
              customer: request.customer,
              amountCents: request.amountCents,
              description: request.description
            })
          }
          return { url: request.successUrl }
        }),
      cardPage: (request) => Effect.succeed({ url: request.returnUrl }),
      // No hosted pages and no notifications: the page is the panel again (the customer pays there off-session).
      paymentLink: (request) => Effect.succeed({ url: request.returnUrl }),
      savedCard: () => Effect.succeed(Option.none()),
      verifyNotification: () => Effect.fail(new NotificationSignatureInvalid()),
      findCharge: (idempotencyKey) => store.byKey(idempotencyKey),
      refund: (request) =>
        Effect.map(Effect.flatMap(fresh("re"), (reference) => store.refund({ ...request, reference })), (reference) => ({ reference }))
    })
    const control = SandboxPayments.of({
      declineNext: (count, reason) => Ref.update(declining, (d) => ({ ...d, next: count, reason: reason ?? d.reason })),
      declineAll: (decline) => Ref.update(declining, (d) => ({ ...d, all: decline })),
      charges: store.charges
    })
    return Context.make(PaymentGateway, gateway).pipe(Context.add(SandboxPayments, control))
  })

/** Charges kept in memory: one process's tests. */
export const layer = (options: SandboxGatewayOptions = {}) =>
  Layer.effectContext(Effect.flatMap(memoryStore, (store) => gatewayOn(store, options)))

/** Charges kept in the database (`sandbox_payments`), seen by every instance and kept across restarts. */
export const layerSql = (options: SandboxGatewayOptions = {}) =>
  Layer.effectContext(Effect.flatMap(sqlStore, (store) => gatewayOn(store, options)))
