// The sandbox payment gateway: approves every charge (idempotently, by key) unless told to decline, so the
// whole order flow can be clicked through and tested without a payment provider.
import { Context, Effect, Layer, Ref } from "effect"
import { SecureRandom } from "effect/crypto"
import { PaymentDeclined, PaymentGateway } from "../../ports/PaymentGateway.ts"

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

interface State {
  readonly byKey: ReadonlyMap<string, string>
  readonly charges: ReadonlyMap<string, SandboxCharge>
  readonly declineNext: number
  readonly declineAll: boolean
  readonly reason: string
}

export const layer = (options: { readonly declineAll?: boolean } = {}) =>
  Layer.effectContext(Effect.gen(function*() {
    const random = yield* SecureRandom.SecureRandom
    const state = yield* Ref.make<State>({
      byKey: new Map(),
      charges: new Map(),
      declineNext: 0,
      declineAll: options.declineAll ?? false,
      reason: "card declined (sandbox)"
    })
    const gateway = PaymentGateway.of({
      ready: Effect.void,
      charge: (request) =>
        Effect.gen(function*() {
          const fresh = `ch_${(yield* random.uuidV4()).replace(/-/g, "")}`
          const outcome = yield* Ref.modify(state, (s): readonly [string | PaymentDeclined, State] => {
            const known = s.byKey.get(request.idempotencyKey)
            if (known !== undefined) return [known, s]
            if (s.declineAll || s.declineNext > 0) {
              return [new PaymentDeclined({ reason: s.reason }), { ...s, declineNext: Math.max(0, s.declineNext - 1) }]
            }
            const charge: SandboxCharge = { ...request, reference: fresh, refunded: false }
            return [fresh, {
              ...s,
              byKey: new Map(s.byKey).set(request.idempotencyKey, fresh),
              charges: new Map(s.charges).set(fresh, charge)
            }]
          })
          if (typeof outcome !== "string") return yield* outcome
          return { reference: outcome }
        }),
      refund: (request) =>
        Effect.gen(function*() {
          const fresh = `re_${(yield* random.uuidV4()).replace(/-/g, "")}`
          const reference = yield* Ref.modify(state, (s): readonly [string, State] => {
            const known = s.byKey.get(request.idempotencyKey)
            if (known !== undefined) return [known, s]
            const charge = s.charges.get(request.charge)
            const charges = charge === undefined ? s.charges : new Map(s.charges).set(charge.reference, { ...charge, refunded: true })
            return [fresh, { ...s, charges, byKey: new Map(s.byKey).set(request.idempotencyKey, fresh) }]
          })
          return { reference }
        })
    })
    const control = SandboxPayments.of({
      declineNext: (count, reason) =>
        Ref.update(state, (s) => ({ ...s, declineNext: count, reason: reason ?? s.reason })),
      declineAll: (decline) => Ref.update(state, (s) => ({ ...s, declineAll: decline })),
      charges: Effect.map(Ref.get(state), (s) => [...s.charges.values()])
    })
    return Context.make(PaymentGateway, gateway).pipe(Context.add(SandboxPayments, control))
  }))
