// The sandbox Stripe's optional state file: every object, event, endpoint secret and idempotency answer, so a restart
// (of `npm start`, or a process killed mid-renewal) finds the customers and saved cards the platform's records name
// and replays a key already used. Read at start; written after changes at most every 200 ms and once more at close,
// atomically (a temp file in the same directory, then renamed), mode 0600. Deliveries under way are not kept: an
// event not yet delivered when the process stopped is not sent again.
import { Effect, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { readFile, rename, writeFile } from "node:fs/promises"
import type { Store } from "./Store.ts"

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

const isMissing = (e: unknown) => typeof e === "object" && e !== null && "code" in e && e.code === "ENOENT"

/** Loads `file` into the (empty) store when it exists, then keeps it up to date until the scope closes. */
export const keepInFile = (store: Store, file: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise(() => readFile(file, "utf8")).pipe(
      Effect.catch((e) => (isMissing(e.cause) ? Effect.succeed(undefined) : Effect.die(e.cause)))
    )
    let written = text
    if (text !== undefined) {
      const decoded = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Document))(text).pipe(Effect.result)
      if (decoded._tag === "Success") restore(store, decoded.success)
      else {
        const aside = `${file}.invalid-${Date.now()}`
        yield* Effect.promise(() => rename(file, aside))
        yield* Effect.logWarning(`sandbox Stripe: ${file} is not a state file it wrote; moved to ${aside}, starting empty`)
        written = undefined
      }
    }
    // Uninterruptible: a stop waits for a write under way, so the last one (at close) is never overtaken by an older.
    const save = Effect.uninterruptible(Effect.gen(function*() {
      const now = yield* store.serial(Effect.sync(() => encode(store)))
      if (now === written) return
      const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`
      yield* Effect.tryPromise(async () => {
        await writeFile(temp, now, { mode: 0o600 })
        await rename(temp, file)
      }).pipe(
        Effect.tap(() => Effect.sync(() => (written = now))),
        Effect.catch((e) => Effect.logWarning(`sandbox Stripe: could not save ${file}: ${String(e.cause)}`))
      )
    }))
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep("200 millis"), save)))
    yield* Effect.addFinalizer(() => save)
  })
