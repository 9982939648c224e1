// One signed-in connection to one cluster: its TLS-aware HTTP client, its credentials (API token, or a ticket renewed
// before it expires and refreshed once on a 401), and the sending of one call with PVE's envelope decoded
// (reference/proxmox.md §1, §2.1, §2.2).
import * as Http from "node:http"
import { NodeHttpClient } from "@effect/platform-node"
import { Clock, Duration, Effect, Redacted, Ref, Schema, Semaphore } from "effect"
import { Headers, type HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import type { ProxmoxCluster, ProxmoxTls } from "../../ports/ProxmoxClusters.ts"
import { apiPrefix, type ProxmoxRequest, toWire } from "./encoding.ts"
import { CallFailed, formatDuration, outcomeUnknownStatus, sanitize } from "./failures.ts"
import { requests } from "./requests.ts"
import { decodeEnvelope, type Envelope, Ticket } from "./responses.ts"
import { type Agents, destroyAgents, makeAgents } from "./tls.ts"
import { meterUpstream } from "../../domain/ops/metrics.ts"

export interface SessionOptions {
  /** Per HTTP attempt; pveproxy gives up on forwarded calls after 30 s (§2.2). */
  readonly requestTimeout: Duration.Input
  /** Tickets live 2 h; renewing at 1 h leaves room for clock skew and slow calls (§1.3). */
  readonly ticketRenewAfter: Duration.Input
  /**
   * The agents a session's HTTP calls and console WebSocket connect through, released with the session. Default
   * (`makeAgents`): sockets to the cluster, trusting its certificate as `tls` says; the simulation's reach it in memory.
   */
  readonly connect?: ((tls: ProxmoxTls) => Agents) | undefined
}

/** A user ticket with the CSRF token that goes with it. */
export interface TicketCredentials {
  readonly username: string
  readonly ticket: string
  readonly csrf: string
}

export interface ProxmoxSession {
  /** `https://host:8006`, no path. */
  readonly origin: string
  readonly agents: Agents
  /** Sends `request` once (re-signing in once after a 401) and returns its decoded envelope. */
  send(operation: string, request: ProxmoxRequest): Effect.Effect<Envelope, CallFailed>
  /** The ticket of a ticket session, signed in if needed; null for an API-token session. */
  readonly ticket: Effect.Effect<TicketCredentials, CallFailed> | null
}

/** How requests are signed; `refused` reacts to a 401 and says whether one more attempt is worth it. */
interface Signer {
  readonly headers: (method: ProxmoxRequest["method"]) => Effect.Effect<Record<string, string>, CallFailed>
  readonly refused: (headers: Record<string, string>) => Effect.Effect<boolean, CallFailed>
  readonly ticket: Effect.Effect<TicketCredentials, CallFailed> | null
}

type Execute = (
  operation: string,
  request: ProxmoxRequest,
  headers: Record<string, string>
) => Effect.Effect<Envelope, CallFailed>

const redactedHeaderNames = ["authorization", "cookie", "set-cookie", "x-api-key", "csrfpreventiontoken"]

/**
 * The reason phrase is PVE's only error message before libpve-http-server-perl 5.2 (§2.2). The platform's response
 * does not expose it, but keeps node's IncomingMessage (as `source`, possibly behind a wrapper's `original`).
 */
const reasonPhraseOf = (response: HttpClientResponse.HttpClientResponse): string | undefined => {
  let current: unknown = response
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof Http.IncomingMessage) return current.statusMessage
    current = Reflect.get(current, "source") ?? Reflect.get(current, "original")
  }
  return undefined
}

const errorDetail = (envelope: Envelope | undefined, reason: string | undefined): string => {
  const message = envelope?.message ?? reason ?? ""
  const perParam = Object.entries(envelope?.errors ?? {}).map(([name, text]) => `${name}: ${String(text)}`)
  return [message.trim(), ...perParam].filter((s) => s !== "").join("; ") || "no message"
}

const transportDetail = (error: HttpClientError.HttpClientError): string => {
  const cause: unknown = "cause" in error.reason ? error.reason.cause : undefined
  return cause instanceof Error ? `${error.reason._tag}: ${cause.message}` : error.reason._tag
}

const makeExecute = (origin: string, client: HttpClient.HttpClient, options: SessionOptions): Execute =>
(operation, request, headers) => {
  const wire = toWire(request)
  const secrets = request.secrets ?? []
  const fail = (status: number | null, detail: string, outcomeUnknown: boolean) =>
    new CallFailed({ operation, status, detail: sanitize(detail, secrets), outcomeUnknown })
  const base = HttpClientRequest.make(wire.method)(`${origin}${apiPrefix}${wire.target}`).pipe(
    HttpClientRequest.setHeaders({ accept: "application/json", ...headers })
  )
  const httpRequest = wire.body === undefined
    ? base
    : HttpClientRequest.bodyText(base, wire.body, "application/x-www-form-urlencoded")
  return meterUpstream("proxmox", (f: CallFailed) => (f.status === 429 ? "throttled" : "error"), Effect.gen(function*() {
    const response = yield* client.execute(httpRequest)
    const text = yield* response.text
    const envelope = yield* decodeEnvelope(text).pipe(Effect.option)
    if (response.status >= 200 && response.status < 300) {
      if (envelope._tag === "None") return yield* fail(response.status, "undecodable answer", false)
      return envelope.value
    }
    const detail = errorDetail(envelope._tag === "Some" ? envelope.value : undefined, reasonPhraseOf(response))
    return yield* fail(response.status, detail, outcomeUnknownStatus(response.status))
  }).pipe(
    Effect.scoped,
    Effect.catchTag("HttpClientError", (e) => Effect.fail(fail(null, transportDetail(e), wire.method !== "GET"))),
    Effect.timeoutOrElse({
      duration: options.requestTimeout,
      orElse: () =>
        Effect.fail(fail(null, `no answer within ${formatDuration(options.requestTimeout)}`, wire.method !== "GET"))
    }),
    Effect.provideService(Headers.CurrentRedactedNames, redactedHeaderNames)
  ))
}

const tokenSigner = (tokenId: string, secret: Redacted.Redacted<string>): Signer => ({
  // Tokens are stateless: no CSRF token, and a refused token will not be accepted on a second try (§1.4).
  headers: () => Effect.succeed({ authorization: `PVEAPIToken=${tokenId}=${Redacted.value(secret)}` }),
  refused: () => Effect.succeed(false),
  ticket: null
})

interface HeldTicket extends TicketCredentials {
  readonly obtainedAt: number
}

/** Tickets are valid 2 h; past this age renewal is no longer attempted and the password is used again (§1.3). */
const ticketLifetime = Duration.minutes(110)

/**
 * Ticket auth with single-flight sign-in: whoever finds the ticket missing or due takes the semaphore, and everyone
 * queued behind it re-reads the fresh ticket instead of signing in again (§5.4).
 */
export const makeTicketSigner = (
  execute: Execute,
  username: string,
  password: Redacted.Redacted<string>,
  options: SessionOptions
) =>
  Effect.gen(function*() {
    const held = yield* Ref.make<HeldTicket | undefined>(undefined)
    const gate = yield* Semaphore.make(1)
    const renewAfter = Duration.toMillis(Duration.fromInputUnsafe(options.ticketRenewAfter))

    const signIn = (secret: string) =>
      Effect.gen(function*() {
        const envelope = yield* execute("sign in", requests.ticket(username, secret), {})
        const answer = yield* Schema.decodeUnknownEffect(Ticket)(envelope.data).pipe(
          Effect.mapError(() =>
            new CallFailed({
              operation: "sign in",
              status: 200,
              detail: "no ticket in the answer",
              outcomeUnknown: false
            })
          )
        )
        const ticket: HeldTicket = {
          username: answer.username,
          ticket: answer.ticket,
          csrf: answer.CSRFPreventionToken,
          obtainedAt: yield* Clock.currentTimeMillis
        }
        yield* Ref.set(held, ticket)
        return ticket
      })

    const login = signIn(Redacted.value(password))

    /** Posting the current ticket as the password renews it without the real password (§1.3). */
    const renew = (current: HeldTicket) =>
      signIn(current.ticket).pipe(Effect.catch(() => login))

    const isFresh = (t: HeldTicket, now: number) => now - t.obtainedAt < renewAfter

    const current: Effect.Effect<TicketCredentials, CallFailed> = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const seen = yield* Ref.get(held)
      if (seen !== undefined && isFresh(seen, now)) return seen
      return yield* gate.withPermit(Effect.gen(function*() {
        const again = yield* Ref.get(held)
        const at = yield* Clock.currentTimeMillis
        if (again === undefined) return yield* login
        if (isFresh(again, at)) return again
        if (at - again.obtainedAt < Duration.toMillis(ticketLifetime)) return yield* renew(again)
        return yield* login
      }))
    })

    const signer: Signer = {
      headers: (method) =>
        Effect.map(current, (t) => ({
          cookie: `PVEAuthCookie=${encodeURIComponent(t.ticket)}`,
          // Every write signed by a ticket needs the CSRF token, or PVE answers 401 (§1.2).
          ...(method === "GET" ? {} : { csrfpreventiontoken: t.csrf })
        })),
      // Any 401 means "sign in again" (the message changed across releases, §1.2), unless another fiber already did.
      refused: (headers) =>
        gate.withPermit(Effect.gen(function*() {
          const now = yield* Ref.get(held)
          if (now !== undefined && headers["cookie"] !== `PVEAuthCookie=${encodeURIComponent(now.ticket)}`) return true
          yield* login
          return true
        })),
      ticket: current
    }
    return signer
  })

/** A session for `cluster`, signed in with `login` when given (the console's ticket), else with its own auth. */
export const makeSession = (
  cluster: ProxmoxCluster,
  options: SessionOptions,
  login?: { readonly username: string; readonly password: Redacted.Redacted<string> }
) =>
  Effect.gen(function*() {
    const origin = cluster.url.replace(/\/+$/, "")
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() => (options.connect ?? makeAgents)(cluster.tls)),
      (a) => Effect.sync(() => destroyAgents(a))
    )
    const client = yield* NodeHttpClient.makeNodeHttp.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agents))
    const execute = makeExecute(origin, client, options)
    const signer = login !== undefined
      ? yield* makeTicketSigner(execute, login.username, login.password, options)
      : cluster.auth.kind === "password"
      ? yield* makeTicketSigner(execute, cluster.auth.username, cluster.auth.password, options)
      : tokenSigner(cluster.auth.tokenId, cluster.auth.secret)

    const send = (operation: string, request: ProxmoxRequest): Effect.Effect<Envelope, CallFailed> => {
      // A failed sign-in is reported as a failure of the operation that needed it.
      const signed = <A>(effect: Effect.Effect<A, CallFailed>) =>
        Effect.mapError(effect, (f) =>
          new CallFailed({ operation, status: f.status, detail: f.detail, outcomeUnknown: false }))
      return Effect.gen(function*() {
        const headers = yield* signed(signer.headers(request.method))
        const first = yield* Effect.result(execute(operation, request, headers))
        if (first._tag === "Success") return first.success
        if (first.failure.status !== 401) return yield* first.failure
        if (!(yield* signed(signer.refused(headers)))) return yield* first.failure
        // One more attempt only: a second 401 is a real refusal, not an expired ticket.
        return yield* execute(operation, request, yield* signed(signer.headers(request.method)))
      })
    }

    return { origin, agents, send, ticket: signer.ticket } satisfies ProxmoxSession
  })
