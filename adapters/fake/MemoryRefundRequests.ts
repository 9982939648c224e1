// In-memory RefundRequests on the in-memory Ledger: reservations are decided one at a time (the table's row lock).
import { Effect, Layer, Option, Ref, Semaphore } from "effect"
import { Ledger } from "../../ports/Ledger.ts"
import { type RefundRequest, RefundRequests, type Reservation } from "../../ports/RefundRequests.ts"

export const make = Effect.gen(function*() {
  const ledger = yield* Ledger
  const requests = yield* Ref.make<ReadonlyArray<RefundRequest>>([])
  const one = yield* Semaphore.make(1)
  /** The charge and what is taken of it: its refunds in the ledger and the requests still pending. */
  const charge = (chargeId: string) =>
    Effect.gen(function*() {
      const found = yield* ledger.entry(chargeId)
      if (Option.isNone(found) || found.value.kind !== "charge") return Option.none()
      const c = found.value
      const refunds = (yield* ledger.forUser(c.userId, null, Number.MAX_SAFE_INTEGER))
        .filter((e) => e.kind === "refund" && e.reference.startsWith(`${c.reference}:`))
      const pending = (yield* Ref.get(requests)).filter((r) => r.chargeId === chargeId && r.refundEntryId === null)
      const taken = [...refunds, ...pending].reduce((sum, e) => sum + e.amountCents, 0)
      return Option.some({ amountCents: c.amountCents, taken })
    })
  return RefundRequests.of({
    reserve: (request) =>
      one.withPermits(1)(Effect.gen(function*() {
        const found = yield* charge(request.chargeId)
        if (Option.isNone(found)) return { _tag: "NoSuchCharge" } satisfies Reservation
        const earlier = (yield* Ref.get(requests)).find((r) => r.idempotencyKey === request.idempotencyKey)
        if (earlier !== undefined) {
          return earlier.chargeId === request.chargeId && earlier.amountCents === request.amountCents
            ? { _tag: "Replayed", request: earlier } satisfies Reservation
            : { _tag: "KeyReused" } satisfies Reservation
        }
        const refundableCents = found.value.amountCents - found.value.taken
        if (request.amountCents > refundableCents) return { _tag: "Exceeds", refundableCents } satisfies Reservation
        const reserved: RefundRequest = { ...request, refundEntryId: null }
        yield* Ref.update(requests, (all) => [...all, reserved])
        return { _tag: "Reserved", request: reserved } satisfies Reservation
      })),
    complete: (id, refundEntryId) =>
      Ref.modify(requests, (all) => {
        const pending = all.some((r) => r.id === id && r.refundEntryId === null)
        return [pending, pending ? all.map((r) => (r.id === id ? { ...r, refundEntryId } : r)) : all]
      }),
    refundable: (chargeId) =>
      Effect.map(charge(chargeId), Option.match({ onNone: () => 0, onSome: (c) => c.amountCents - c.taken }))
  })
})

export const layer = Layer.effect(RefundRequests, make)
