// GamePanel over Pterodactyl's Application and Client APIs and its Wings nodes: each port operation as its upstream
// calls (reference/pterodactyl.md §2–§4), with the panel's failures mapped onto the port's errors once, in
// failures.ts. Only eggs and nodes are cached (nodes are dropped from the cache when this adapter creates or deletes
// a server on the panel): everything else must be read fresh.
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { HttpClient } from "effect/http"
import {
  type FileCall,
  GamePanel,
  GamePanels,
  GamePanelUnavailable,
  PanelRefused,
  type PanelNode,
  type PanelServer,
  PanelServerNotOurs
} from "../../ports/GamePanel.ts"
import { type Answer, type CallOptions, type CallSpec, decodeAs, makeCalls, originOf } from "./calls.ts"
import { openGameConsole } from "./console.ts"
import { NodeConnections } from "./NodeConnections.ts"
import { CallFailed, failure, isTransient, portErrorAmong, refusalTags } from "./failures.ts"
import { clientPaths, fileCall, requests } from "./requests.ts"
import {
  AllocationList,
  EggItem,
  NestList,
  NodeList,
  type Page,
  pageOf,
  ServerItem,
  ServerList,
  toAllocation,
  toEgg,
  toNode,
  toServer,
  toUser,
  UserItem,
  WebsocketCredentials
} from "./responses.ts"
import { download, upload } from "./transfers.ts"

export interface PterodactylOptions extends CallOptions {
  /** Eggs change only when an admin edits them. */
  readonly eggTtl: Duration.Input
  /** Nodes feed placement, which has its own claims: a short cache only spares the panel's rate limit. */
  readonly nodesTtl: Duration.Input
  /** Console tokens live 10 min (§3.1); renewing this long before `exp` beats Wings' 60 s warning. */
  readonly consoleTokenRefreshMargin: Duration.Input
  readonly consoleOpenTimeout: Duration.Input
  readonly consoleBufferedEvents: number
  /** A whole upload to the node (files up to the node's upload limit, 100 MiB by default). */
  readonly uploadTimeout: Duration.Input
  /** Items per page when listing (the Application API has no cap, §1.2). */
  readonly pageSize: number
}

export const defaultOptions: PterodactylOptions = {
  requestTimeout: "30 seconds",
  retries: 3,
  retryBaseDelay: "500 millis",
  maxRetryAfter: "10 seconds",
  eggTtl: "60 seconds",
  nodesTtl: "5 seconds",
  consoleTokenRefreshMargin: "90 seconds",
  consoleOpenTimeout: "10 seconds",
  consoleBufferedEvents: 1024,
  uploadTimeout: "30 minutes",
  pageSize: 100
}

type Failure = CallFailed | { readonly _tag: "PanelUnknown" }

/** Maps a CallFailed with `toPort`, leaving PanelUnknown (and anything already the port's) as it is. */
const mapCall = <E2>(toPort: (f: CallFailed) => E2) =>
<A, E, R>(effect: Effect.Effect<A, E | CallFailed, R>): Effect.Effect<A, Exclude<E, CallFailed> | E2, R> =>
  Effect.mapError(effect, (e): Exclude<E, CallFailed> | E2 => (isCallFailed(e) ? toPort(e) : (e as Exclude<E, CallFailed>)))

const isCallFailed = (e: unknown): e is CallFailed => e instanceof CallFailed

const is404 = (e: Failure): e is CallFailed => e._tag === "CallFailed" && e.status === 404

/** A value per key for `ttl`, read through the Clock so tests can move time. */
const ttlCache = <A>(ttl: Duration.Input) => {
  const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(ttl))
  const entries = new Map<string, { readonly value: A; readonly until: number }>()
  const get = <E, R>(key: string, load: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const hit = entries.get(key)
      if (hit !== undefined && hit.until > now) return hit.value
      const value = yield* load
      entries.set(key, { value, until: now + ttlMs })
      return value
    })
  const forget = (key: string) => Effect.sync(() => void entries.delete(key))
  return { get, forget }
}

export const layerWith = (
  overrides: Partial<PterodactylOptions> = {}
): Layer.Layer<GamePanel, never, GamePanels | HttpClient.HttpClient> =>
  Layer.effect(
    GamePanel,
    Effect.gen(function*() {
      const options: PterodactylOptions = { ...defaultOptions, ...overrides }
      const http = yield* HttpClient.HttpClient
      const panels = yield* GamePanels
      const calls = makeCalls(http, panels, options)
      const eggs = ttlCache<ReturnType<typeof toEgg>>(options.eggTtl)
      const nodeLists = ttlCache<ReadonlyArray<PanelNode>>(options.nodesTtl)
      const nodeConnections = yield* NodeConnections
      const transfers = {
        requestTimeout: options.requestTimeout,
        uploadTimeout: options.uploadTimeout,
        dispatcher: nodeConnections.dispatcher
      }

      const logged = (operation: string) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        effect.pipe(
          Effect.tapError((e) =>
            e instanceof GamePanelUnavailable
              ? Effect.logWarning("Pterodactyl operation failed").pipe(
                Effect.annotateLogs({ operation, error: e._tag, detail: e.detail })
              )
              : Effect.void
          ),
          Effect.withSpan(`PterodactylGamePanel.${operation}`)
        )

      const app = <S extends Parameters<typeof decodeAs>[0]>(
        panel: string,
        operation: string,
        spec: CallSpec,
        schema: S,
        idempotent = true
      ) => Effect.flatMap(calls.application(panel, operation, spec, { idempotent }), decodeAs(schema, operation))

      /** Every page of a list, in order. */
      const allPages = <A, E>(page: (n: number) => Effect.Effect<Page<A>, E>) =>
        Effect.gen(function*() {
          const items: Array<A> = []
          for (let n = 1;; n++) {
            const current = yield* page(n)
            items.push(...current.items)
            if (current.currentPage >= current.totalPages || current.items.length === 0) return items
          }
        })

      /**
       * A creation that may have happened although its answer was lost: before sending it again, look for it by our
       * external id (§6.2), so a retry never makes a second one.
       */
      const createOnce = <A, E>(
        create: Effect.Effect<A, E | CallFailed>,
        existing: Effect.Effect<A | null, E | CallFailed>
      ) => {
        const attempt = (left: number): Effect.Effect<A, E | CallFailed> =>
          create.pipe(Effect.catchIf(
            (e): e is CallFailed => isCallFailed(e) && isTransient(e),
            (e) =>
              Effect.flatMap(existing, (found) => {
                if (found !== null) return Effect.succeed(found)
                return left > 0 ? Effect.andThen(Effect.sleep(options.retryBaseDelay), attempt(left - 1)) : Effect.fail(e)
              })
          ))
        return attempt(options.retries)
      }

      const userFor = (panel: string, userId: string) =>
        app(panel, "find user", requests.userByExternalId(userId), UserItem).pipe(
          Effect.map((u) => toUser(u.attributes)),
          Effect.catchIf(is404, () => Effect.succeed(null))
        )

      const serverForOrder = (panel: string, orderId: string) =>
        app(panel, "find server", requests.serverByExternalId(orderId), ServerItem).pipe(
          Effect.map((s) => toServer(s.attributes)),
          Effect.catchIf(is404, () => Effect.succeed(null))
        )

      const fetchNodes = (panel: string) =>
        allPages((n) => Effect.map(app(panel, "list nodes", requests.nodes(n, options.pageSize), NodeList), pageOf)).pipe(
          Effect.map((nodes) => nodes.map(toNode))
        )

      /** The nest is not known by the caller: the first nest that has the egg is its nest (§2.9). */
      const findEgg = (panel: string, eggId: number) =>
        Effect.gen(function*() {
          const nests = yield* allPages((n) =>
            Effect.map(app(panel, "read egg", requests.nests(n, options.pageSize), NestList), pageOf)
          )
          for (const nest of nests) {
            const found = yield* app(panel, "read egg", requests.egg(nest.id, eggId), EggItem).pipe(
              Effect.map((e) => toEgg(e.attributes)),
              Effect.catchIf(is404, () => Effect.succeed(null))
            )
            if (found !== null) return found
          }
          return yield* failure("read egg", 404, "NotFoundHttpException", "no nest has this egg")
        })

      const suspension = (panel: string, id: number, action: "suspend" | "unsuspend") =>
        calls.application(panel, `${action} server`, requests.suspension(id, action)).pipe(
          Effect.asVoid,
          mapCall(portErrorAmong("GamePanelThrottled", "PanelResourceNotFound", "ServerStateConflict")),
          logged(`${action} server`)
        )

      const clientErrors = mapCall(
        portErrorAmong(
          "GamePanelThrottled",
          "PanelValidationFailed",
          "ServerStateConflict",
          "PanelResourceNotFound",
          ...refusalTags
        )
      )

      const relayFileCall = (panel: string, server: string, call: FileCall) => {
        const operation = "client request"
        if ("backup" in call.operation && !/^[\w-]+$/.test(call.operation.backup)) {
          // A backup id is one path segment: anything else could reach another of the server's routes.
          return Effect.fail(new PanelRefused({ operation, detail: "the backup id is not one path segment" }))
        }
        const { method, path } = fileCall(server, call.operation)
        const query = call.query === "" ? "" : `?${call.query}`
        const spec: CallSpec = { method, path: `${path}${query}`, ...(call.body === null ? {} : { body: call.body }) }
        return calls.client(panel, operation, spec, { idempotent: method === "GET" }).pipe(
          Effect.map((answer: Answer) => ({ status: answer.status, contentType: answer.contentType, body: answer.body })),
          clientErrors,
          logged(operation)
        )
      }

      return GamePanel.of({
        userFor: (panel, userId) =>
          userFor(panel, userId).pipe(mapCall(portErrorAmong("GamePanelThrottled")), logged("find user")),

        createUser: (panel, user) =>
          createOnce(
            app(panel, "create user", requests.createUser(user), UserItem, false).pipe(
              Effect.map((u) => toUser(u.attributes))
            ),
            userFor(panel, user.userId)
          ).pipe(
            // Made meanwhile for the same user (two orders at once): the panel refuses the e-mail or username as
            // taken (§2.1), and that account is the answer.
            Effect.catchIf(
              (e): e is CallFailed => isCallFailed(e) && e.status === 422 && e.fields.some((f) => f.rule === "unique"),
              (e) => Effect.flatMap(userFor(panel, user.userId), (found) => found === null ? Effect.fail(e) : Effect.succeed(found))
            ),
            mapCall(portErrorAmong("GamePanelThrottled", "PanelValidationFailed")),
            logged("create user")
          ),

        nodes: (panel) =>
          nodeLists.get(panel, fetchNodes(panel)).pipe(mapCall(portErrorAmong("GamePanelThrottled")), logged("list nodes")),

        freeAllocations: (panel, node) =>
          allPages((n) =>
            Effect.map(
              app(panel, "list free allocations", requests.freeAllocations(node, n, options.pageSize), AllocationList),
              pageOf
            )
          ).pipe(
            // Panels before 1.8.0 ignore the filter (§2.11).
            Effect.map((list) => list.map(toAllocation(node)).filter((a) => !a.assigned)),
            mapCall(portErrorAmong("GamePanelThrottled")),
            logged("list free allocations")
          ),

        egg: (panel, eggId) =>
          eggs.get(`${panel}\u0000${eggId}`, findEgg(panel, eggId)).pipe(
            mapCall(portErrorAmong("GamePanelThrottled", "PanelResourceNotFound")),
            logged("read egg")
          ),

        createServer: (panel, server) =>
          createOnce(
            app(panel, "create server", requests.createServer(server), ServerItem, false).pipe(
              Effect.map((s) => toServer(s.attributes))
            ),
            serverForOrder(panel, server.orderId)
          ).pipe(
            // The order has its server already (made by an attempt whose answer was lost): the panel refuses the
            // external id as taken (§2.2, §6.2), and that server is the answer.
            Effect.catchIf(
              (e): e is CallFailed => isCallFailed(e) && e.status === 422 && e.fields.some((f) => f.field === "external_id"),
              (e) => Effect.flatMap(serverForOrder(panel, server.orderId), (found) => found === null ? Effect.fail(e) : Effect.succeed(found))
            ),
            // The node's allocated_resources changed: our own next placement must see it (others' within nodesTtl).
            Effect.ensuring(nodeLists.forget(panel)),
            mapCall(portErrorAmong("GamePanelThrottled", "PanelValidationFailed", "PanelRefused")),
            logged("create server")
          ),

        server: (panel, id) =>
          app(panel, "read server", requests.server(id), ServerItem).pipe(
            Effect.map((s) => toServer(s.attributes)),
            mapCall(portErrorAmong("GamePanelThrottled", "PanelResourceNotFound")),
            logged("read server")
          ),

        serverForOrder: (panel, orderId) =>
          serverForOrder(panel, orderId).pipe(
            mapCall(portErrorAmong("GamePanelThrottled")),
            logged("find server")
          ),

        suspend: (panel, id) => suspension(panel, id, "suspend"),
        unsuspend: (panel, id) => suspension(panel, id, "unsuspend"),

        servers: (panel) =>
          allPages((n) => Effect.map(app(panel, "list servers", requests.servers(n, options.pageSize), ServerList), pageOf)).pipe(
            Effect.map((servers) => servers.map(toServer)),
            mapCall(portErrorAmong("GamePanelThrottled")),
            logged("list servers")
          ),

        // Read first: only a server whose external id is still ours is deleted (a server id never names another
        // server on one panel, but the external id can be changed by hand, and it is what says the server is ours).
        deleteOurServer: (panel, id, orderId) =>
          app(panel, "delete server", requests.server(id), ServerItem).pipe(
            Effect.map((s): Option.Option<PanelServer> => Option.some(toServer(s.attributes))),
            // Already gone (perhaps by our own attempt whose answer was lost) is what was asked for.
            Effect.catchIf(is404, () => Effect.succeed(Option.none<PanelServer>())),
            Effect.flatMap((found) =>
              Effect.gen(function*() {
                if (Option.isNone(found)) return
                if (found.value.orderId !== orderId) {
                  return yield* new PanelServerNotOurs({ panel, id, expected: orderId, found: found.value.orderId })
                }
                yield* calls.application(panel, "delete server", requests.deleteServer(id)).pipe(
                  Effect.catchIf(is404, () => Effect.void)
                )
              })
            ),
            Effect.ensuring(nodeLists.forget(panel)),
            mapCall(portErrorAmong("GamePanelThrottled")),
            logged("delete server")
          ),

        power: (panel, server, signal) =>
          // A restart whose answer was lost is not sent again: it could restart the game twice.
          calls.client(panel, "power", { method: "POST", path: clientPaths.power(server), json: { signal } }, {
            idempotent: signal !== "restart"
          }).pipe(
            Effect.asVoid,
            mapCall(portErrorAmong("GamePanelThrottled", "PanelValidationFailed", "ServerStateConflict", "PanelResourceNotFound", "PanelRefused")),
            logged("power")
          ),

        relayFileCall,

        openConsole: (panel, server) =>
          Effect.gen(function*() {
            const connection = yield* panels.get(panel)
            const credentials = calls.client(panel, "open console", { method: "GET", path: clientPaths.websocket(server) })
              .pipe(
                Effect.flatMap(decodeAs(WebsocketCredentials, "open console")),
                Effect.map((answer) => answer.data),
                clientErrors
              )
            return yield* openGameConsole(credentials, originOf(connection), {
              openTimeout: options.consoleOpenTimeout,
              tokenRefreshMargin: options.consoleTokenRefreshMargin,
              bufferedEvents: options.consoleBufferedEvents,
              connection: nodeConnections.webSocket
            })
          }).pipe(logged("open console")),

        download: (panel, server, target) =>
          download(calls, transfers, panel, server, target).pipe(logged("download")),

        upload: (panel, server, body) => upload(http, calls, transfers, panel, server, body).pipe(logged("upload"))
      })
    })
  )

/** Needs GamePanels and an HttpClient (`NodeHttpClient.layerUndici` at the composition root). */
export const layer: Layer.Layer<GamePanel, never, GamePanels | HttpClient.HttpClient> = layerWith()
