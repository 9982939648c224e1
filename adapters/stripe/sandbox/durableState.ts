// What of the sandbox Stripe survives a restart (the `keepState` option): every object, event, endpoint secret and
// idempotency answer, so a restart (of `npm start`, or a process killed mid-renewal) finds the customers and saved
// cards the platform's records name and replays a key already used. Deliveries under way are not kept: an event not yet
// delivered when the process stopped is not sent again. The document is the one the sandbox's own state file has
// always written (version 1), so a developer's existing file loads unchanged.
import { type Effect, Result, Schema, type Scope } from "effect"
import type { Store } from "./Store.ts"

/** What a state keeper (the sandbox wiring's file) saves and puts back: the store as a document. */
export interface StateSource {
  /** Equal states give equal text: an unchanged document need not be written again. */
  encode(): string
  /** Applies a saved document (the text taken as on disk from then on), or says what is wrong with it. */
  restore(text: string): Result.Result<string, string>
  /** Runs the encoding alone, with no operation on the store half done. */
  readonly serial: <A>(effect: Effect.Effect<A>) => Effect.Effect<A>
}

/**
 * Keeps the document somewhere (a file in sandbox mode), opened for a scope by the `keepState` option: loaded when
 * opened, saved after `changed()` and when the scope closes.
 */
export interface StateKeeper {
  changed(): void
}

/** The `keepState` option: opens a keeper over the document for the current scope. */
export type KeepState = (source: StateSource, warn: (message: string) => void) => Effect.Effect<StateKeeper, never, Scope.Scope>

const Entity = Schema.Record(Schema.String, Schema.Unknown).pipe(
  Schema.check(Schema.makeFilter((o: Readonly<Record<string, unknown>>) => typeof o["id"] === "string" || "an object with an id"))
)
const Entry = <S extends Schema.Top>(value: S) => Schema.Tuple([Schema.String, value])
const Obj = Schema.Record(Schema.String, Schema.Unknown)

const Document = Schema.Struct({
  version: Schema.Literal(1),
  offsetSeconds: Schema.Number,
  customers: Schema.Array(Entity),
  sessions: Schema.Array(Entity),
  paymentIntents: Schema.Array(Entity),
  paymentMethods: Schema.Array(Entity),
  setupIntents: Schema.Array(Entity),
  charges: Schema.Array(Entity),
  refunds: Schema.Array(Entity),
  disputes: Schema.Array(Entity),
  events: Schema.Array(Entity),
  endpoints: Schema.Array(Entity),
  sessionExtras: Schema.Array(Entry(Obj)),
  cards: Schema.Array(Entry(Obj)),
  endpointSecrets: Schema.Array(Entry(Schema.String)),
  previousSecrets: Schema.Array(Entry(Schema.Array(Schema.Struct({ secret: Schema.String, until: Schema.Number })))),
  eventTargets: Schema.Array(Entry(Schema.Array(Schema.String))),
  idempotent: Schema.Array(Entry(Obj))
})

const decodeDocument = Schema.decodeUnknownResult(Schema.fromJsonString(Document))

const encode = (store: Store): string =>
  JSON.stringify({
    version: 1,
    offsetSeconds: store.offsetSeconds,
    customers: [...store.customers.values()],
    sessions: [...store.sessions.values()],
    paymentIntents: [...store.paymentIntents.values()],
    paymentMethods: [...store.paymentMethods.values()],
    setupIntents: [...store.setupIntents.values()],
    charges: [...store.charges.values()],
    refunds: [...store.refunds.values()],
    disputes: [...store.disputes.values()],
    events: store.events,
    endpoints: [...store.endpoints.values()],
    // A challenge waiting on the page does not outlive the process: the cardholder starts again.
    sessionExtras: [...store.sessionExtras].map(([id, extras]) => [id, { ...extras, awaitingAuthentication: false }]),
    cards: [...store.cards],
    endpointSecrets: [...store.endpointSecrets],
    previousSecrets: [...store.previousSecrets],
    eventTargets: [...store.eventTargets],
    idempotent: [...store.idempotent]
  })

// The document is this module's own output (checked above for its shape and ids): its objects go back as they were
// written, in the types they were written from.
const restore = (store: Store, doc: typeof Document.Type) => {
  const fill = <A>(map: Map<string, A>, items: ReadonlyArray<Readonly<Record<string, unknown>>>) => {
    for (const item of items) map.set(String(item["id"]), structuredClone(item) as unknown as A)
  }
  fill(store.customers, doc.customers)
  fill(store.sessions, doc.sessions)
  fill(store.paymentIntents, doc.paymentIntents)
  fill(store.paymentMethods, doc.paymentMethods)
  fill(store.setupIntents, doc.setupIntents)
  fill(store.charges, doc.charges)
  fill(store.refunds, doc.refunds)
  fill(store.disputes, doc.disputes)
  fill(store.eventsById, doc.events)
  store.events.push(...store.eventsById.values())
  fill(store.endpoints, doc.endpoints)
  const entries = <A>(map: Map<string, A>, items: ReadonlyArray<readonly [string, unknown]>) => {
    for (const [id, value] of items) map.set(id, structuredClone(value) as A)
  }
  entries(store.sessionExtras, doc.sessionExtras)
  entries(store.cards, doc.cards)
  entries(store.endpointSecrets, doc.endpointSecrets)
  entries(store.previousSecrets, doc.previousSecrets)
  entries(store.eventTargets, doc.eventTargets)
  entries(store.idempotent, doc.idempotent)
  store.offsetSeconds = doc.offsetSeconds
}

/** The store as the state file sees it: restored into the empty store at start, its saved text taken as on disk. */
export const durableStore = (store: Store): StateSource => ({
  encode: () => encode(store),
  restore: (text) => {
    const decoded = decodeDocument(text)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure.message)
    restore(store, decoded.success)
    return Result.succeed(text)
  },
  serial: store.exclusive
})
