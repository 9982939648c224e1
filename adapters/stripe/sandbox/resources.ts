// Customers, payment methods, events and webhook endpoints: the plain resources of the API subset.
import { Effect } from "effect"
import type { Customer, StripeEvent, WebhookEndpoint } from "./objects.ts"
import { newWebhookSecret, page, randomId } from "./objects.ts"
import type { CustomerCreate, CustomerList, CustomerUpdate, EventList, PaymentMethodList, PlainList, Search, WebhookEndpointCreate } from "./params.ts"
import { emit, nowSeconds, stamp, type Store } from "./Store.ts"
import { invalid, noSuch } from "./StripeFailure.ts"

const newestFirst = <A extends { readonly created: number }>(items: Iterable<A>): Array<A> => [...items].reverse()

const found = <A>(map: ReadonlyMap<string, A>, prefix: Parameters<typeof noSuch>[0], id: string, param?: string) => {
  const value = map.get(id)
  return value === undefined ? Effect.fail(noSuch(prefix, id, param)) : Effect.succeed(value)
}

export const getCustomer = (store: Store, id: string, param?: string) => found(store.customers, "cus", id, param)
export const getSession = (store: Store, id: string) => found(store.sessions, "cs", id)
export const getPaymentIntent = (store: Store, id: string, param?: string) => found(store.paymentIntents, "pi", id, param)
export const getPaymentMethod = (store: Store, id: string, param?: string) => found(store.paymentMethods, "pm", id, param)
export const getSetupIntent = (store: Store, id: string) => found(store.setupIntents, "seti", id)
export const getCharge = (store: Store, id: string, param?: string) => found(store.charges, "ch", id, param)
export const getRefund = (store: Store, id: string) => found(store.refunds, "re", id)
export const getDispute = (store: Store, id: string) => found(store.disputes, "dp", id)
export const getEvent = (store: Store, id: string) => found(store.eventsById, "evt", id)
export const getEndpoint = (store: Store, id: string) => found(store.endpoints, "we", id)

export const createCustomer = (store: Store, p: typeof CustomerCreate.Type) =>
  Effect.gen(function*() {
    const customer: Customer = {
      id: randomId("cus", 14),
      object: "customer",
      created: yield* nowSeconds(store),
      livemode: false,
      email: p.email ?? null,
      name: p.name ?? null,
      description: p.description ?? null,
      phone: p.phone ?? null,
      metadata: { ...p.metadata },
      invoice_settings: { default_payment_method: null }
    }
    store.customers.set(customer.id, customer)
    yield* emit(store, "customer.created", customer)
    return customer
  })

/** Stripe's update: given fields replace, metadata keys merge, an empty value unsets (a key, or all with `metadata=`). */
export const updateCustomer = (store: Store, id: string, p: typeof CustomerUpdate.Type) =>
  Effect.gen(function*() {
    const customer = yield* getCustomer(store, id)
    const previous: Record<string, unknown> = {}
    const set = <K extends "email" | "name" | "description" | "phone">(key: K, value: string | undefined) => {
      if (value === undefined) return
      previous[key] = customer[key]
      customer[key] = value === "" ? null : value
    }
    set("email", p.email)
    set("name", p.name)
    set("description", p.description)
    set("phone", p.phone)
    if (p.metadata !== undefined) {
      previous["metadata"] = { ...customer.metadata }
      const next = p.metadata === "" ? {} : { ...customer.metadata }
      if (p.metadata !== "") for (const [k, v] of Object.entries(p.metadata)) v === "" ? delete next[k] : (next[k] = v)
      customer.metadata = next
    }
    const defaultPm = p.invoice_settings?.default_payment_method
    if (defaultPm !== undefined) {
      const pm = defaultPm === "" ? undefined : yield* getPaymentMethod(store, defaultPm, "invoice_settings[default_payment_method]")
      if (pm !== undefined && pm.customer !== customer.id) {
        return yield* invalid(`The customer does not have a payment method with the ID ${pm.id}. The payment method must be attached to the customer.`, {
          param: "invoice_settings[default_payment_method]",
          code: "resource_missing"
        })
      }
      previous["invoice_settings"] = { ...customer.invoice_settings }
      customer.invoice_settings = { default_payment_method: pm?.id ?? null }
    }
    if (Object.keys(previous).length > 0) yield* emit(store, "customer.updated", customer, previous)
    return customer
  })

export const listCustomers = (store: Store, url: string, p: typeof CustomerList.Type) =>
  Effect.sync(() => {
    const all = newestFirst(store.customers.values()).filter((c) => p.email === undefined || c.email === p.email)
    return page(url, all, { limit: p.limit, startingAfter: p.starting_after, endingBefore: p.ending_before })
  })

export const listPaymentMethods = (store: Store, url: string, p: typeof PaymentMethodList.Type, customer: string | undefined) =>
  Effect.gen(function*() {
    const owner = customer ?? p.customer
    if (owner !== undefined) yield* getCustomer(store, owner, "customer")
    const all = newestFirst(store.paymentMethods.values()).filter((pm) => pm.customer !== null && (owner === undefined || pm.customer === owner))
    return page(url, all, { limit: p.limit, startingAfter: p.starting_after, endingBefore: p.ending_before })
  })

export const listEvents = (store: Store, url: string, p: typeof EventList.Type) =>
  Effect.sync(() => {
    const types = p.types ?? (p.type === undefined ? undefined : [p.type])
    const matchesType = (e: StripeEvent) =>
      types === undefined || types.some((t) => (t.endsWith("*") ? e.type.startsWith(t.slice(0, -1)) : e.type === t))
    const c = p.created
    const inRange = (e: StripeEvent) =>
      c === undefined ||
      ((c.gt === undefined || e.created > c.gt) && (c.gte === undefined || e.created >= c.gte) &&
        (c.lt === undefined || e.created < c.lt) && (c.lte === undefined || e.created <= c.lte))
    const all = newestFirst(store.events).filter((e) => matchesType(e) && inRange(e))
    return page(url, all, { limit: p.limit, startingAfter: p.starting_after, endingBefore: p.ending_before })
  })

/** A new endpoint and its signing secret, shown once (on create), as Stripe does. */
export const createEndpoint = (store: Store, p: typeof WebhookEndpointCreate.Type, secret?: string) =>
  Effect.gen(function*() {
    if (!/^https?:\/\//.test(p.url)) return yield* invalid("Invalid URL: URL must be publicly accessible.", { param: "url", code: "url_invalid" })
    if (p.enabled_events.length === 0) return yield* invalid("Missing required param: enabled_events.", { param: "enabled_events", code: "parameter_missing" })
    const endpoint: WebhookEndpoint = {
      ...(yield* stamp(store, randomId("we"), "webhook_endpoint")),
      url: p.url,
      enabled_events: [...p.enabled_events],
      api_version: p.api_version ?? null,
      description: p.description ?? null,
      metadata: { ...p.metadata },
      status: "enabled"
    }
    const signing = secret ?? newWebhookSecret()
    store.endpoints.set(endpoint.id, endpoint)
    store.endpointSecrets.set(endpoint.id, signing)
    return { ...endpoint, secret: signing }
  })

export const listEndpoints = (store: Store, url: string, p: typeof PlainList.Type) =>
  Effect.sync(() => page(url, newestFirst(store.endpoints.values()), { limit: p.limit, startingAfter: p.starting_after, endingBefore: p.ending_before }))

export const deleteEndpoint = (store: Store, id: string) =>
  Effect.gen(function*() {
    yield* getEndpoint(store, id)
    store.endpoints.delete(id)
    store.endpointSecrets.delete(id)
    return { id, object: "webhook_endpoint", deleted: true }
  })

/**
 * PaymentIntents by one metadata value (`metadata['KEY']:'VALUE'`, the only clause the platform sends), newest first,
 * as Stripe's search answers them (its index lags behind by up to a minute; the sandbox's does not).
 */
export const searchPaymentIntents = (store: Store, url: string, p: typeof Search.Type) =>
  Effect.gen(function*() {
    const clause = /^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(p.query.trim())
    if (clause === null) return yield* invalid("The sandbox's search understands only `metadata['KEY']:'VALUE'`.", { param: "query" })
    const [, key = "", raw = ""] = clause
    const value = raw.replace(/\\(.)/g, "$1")
    const data = newestFirst(store.paymentIntents.values()).filter((pi) => pi.metadata[key] === value).slice(0, p.limit ?? 10)
    return { object: "search_result", url, data, has_more: false, next_page: null }
  })
