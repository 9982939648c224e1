// The durable workflow engine (effect/cluster, its state in the same database): on PostgreSQL every process is a
// runner the others reach over a socket; on the embedded database the one process is the only runner.
import { NodeCrypto, NodeSocketServer } from "@effect/platform-node"
import { layerClientProtocol } from "@effect/platform-node/NodeClusterSocket"
import { Duration, Effect, Equal, Layer, Option } from "effect"
import {
  ClusterWorkflowEngine,
  RunnerAddress,
  RunnerHealth,
  Runners,
  RunnerStorage,
  Sharding,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage
} from "effect/cluster"
import * as NetAddress from "effect/net/NetAddress"
import { RpcSerialization } from "effect/rpc"
import { SocketServer } from "effect/socket"
import { networkInterfaces } from "node:os"
import { GuardedPgliteRunnerStorage, GuardedSqlRunnerStorage } from "./EngineLocks.ts"

/** Where this process's runner is reached and listens (RUNNER_HOST, RUNNER_LISTEN_HOST, RUNNER_PORT). */
export interface RunnerOptions {
  /** The address other runners connect to; none: this machine's private address (see `privateHost`). */
  readonly host: Option.Option<string>
  /** The interface the runner listens on; none: `host`. */
  readonly listenHost: Option.Option<string>
  /** 0: a free port chosen at start, so replicas with identical settings never share a runner address. */
  readonly port: number
  /** How often each runner pings the others (RUNNER_HEALTH_CHECK_SECONDS). */
  readonly healthCheck: Duration.Duration
}

export interface EngineOptions {
  readonly embedded: boolean
  readonly lockRefresh: Duration.Duration
  /**
   * How often the engine reads its database for messages no call announced (WORKFLOW_POLL_MS; effect/cluster's
   * default is 10 s): a cron run or a durable timer coming due, a message stored for a shard this runner holds. It
   * also paces the runner's attempts to take shards assigned to it that it does not hold yet.
   */
  readonly poll: Duration.Duration
  readonly runner: RunnerOptions
}

/**
 * This machine's first private address (IPv4 RFC 1918, then IPv6 unique-local), else loopback: inside a container or
 * a pod that is the address the other replicas reach; a machine with only public addresses keeps its runner on
 * loopback unless RUNNER_HOST says otherwise, since the runner protocol has no authentication of its own.
 */
export const privateHost = (interfaces = networkInterfaces()): string => {
  const addresses = Object.values(interfaces).flatMap((list) => list ?? []).filter((i) => !i.internal)
  const parsed = addresses.flatMap((i) => {
    const ip = NetAddress.ipFromString(i.address)
    return ip._tag === "Success" ? [ip.success] : []
  })
  const v4 = parsed.find((ip) => NetAddress.isIpv4Address(ip) && NetAddress.isPrivate(ip))
  const v6 = parsed.find((ip) => NetAddress.isIpv6Address(ip) && NetAddress.isUniqueLocal(ip))
  const found = v4 ?? v6
  return found === undefined ? "127.0.0.1" : NetAddress.formatIp(found)
}

const hostPort = (host: string, port: number) => host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`

/**
 * How soon a runner sees another one join or leave (effect/cluster's default is 3 s): one small read of the runner
 * table per second per runner, for a takeover that does not wait on it.
 */
const REFRESH_ASSIGNMENTS = Duration.seconds(1)

/**
 * Every runner pings the others every `interval` and records in the runner table which answer. effect/cluster does
 * this from one runner only (a cluster singleton): when that runner is the one that died, nobody notices until its
 * heartbeat expires (35 s). Done by every live runner, a runner killed outright is marked unhealthy within about
 * `interval` plus RunnerHealth's ping retries (about 3 s), and the survivors take its shards at their next refresh.
 * A runner that others no longer count as healthy judges nobody (it may be the one cut off); one that answers again
 * is counted healthy again.
 */
const RunnerWatchLive = (self: RunnerAddress.RunnerAddress, interval: Duration.Duration) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const storage = yield* RunnerStorage.RunnerStorage
    const health = yield* RunnerHealth.RunnerHealth
    const round = Effect.gen(function*() {
      const runners = yield* storage.getRunners
      const selfHealthy = runners.some(([runner, healthy]) => healthy && Equal.equals(runner.address, self))
      yield* Effect.forEach(
        runners.filter(([runner]) => !Equal.equals(runner.address, self)),
        ([runner, healthy]) =>
          Effect.flatMap(health.isAlive(runner.address), (alive) =>
            alive === healthy || (!alive && !selfHealthy)
              ? Effect.void
              : Effect.andThen(
                storage.setRunnerHealth(runner.address, alive),
                Effect.logInfo(`workflow runner ${hostPort(runner.address.host, runner.address.port)} is ${alive ? "back" : "gone"}`)
              )),
        { concurrency: "unbounded", discard: true }
      )
    })
    yield* round.pipe(
      Effect.catchCause((cause) => Effect.logDebug("checking the other workflow runners failed", cause)),
      Effect.andThen(Effect.sleep(interval)),
      Effect.forever,
      Effect.forkScoped
    )
  }))

/**
 * A runner on a socket server of its own (effect/cluster's SocketRunner): messages for a shard another runner holds
 * go straight to it, and RunnerHealth pings tell a dead runner from a live one. The server is bound first, so that
 * with RUNNER_PORT=0 the runner's address carries the port the system chose: each process has its own address,
 * hence its own row in the runner table and its own machine id for the engine's generated ids.
 */
const SocketRunnerLive = (options: EngineOptions) => {
  const host = Option.getOrElse(options.runner.host, () => privateHost())
  const listenHost = Option.getOrElse(options.runner.listenHost, () => host)
  const runner = Layer.unwrap(Effect.gen(function*() {
    const bound = (yield* SocketServer.SocketServer).address
    const port = NetAddress.isInetAddress(bound) ? bound.port : options.runner.port
    const self = RunnerAddress.make(host, port)
    yield* Effect.logInfo(`workflow runner listening on ${hostPort(listenHost, port)}, reached at ${hostPort(host, port)}`)
    const config = ShardingConfig.layer({
      runnerAddress: Option.some(self),
      runnerListenAddress: Option.some(RunnerAddress.make(listenHost, port)),
      shardLockRefreshInterval: options.lockRefresh,
      entityMessagePollInterval: options.poll,
      runnerHealthCheckInterval: options.runner.healthCheck,
      refreshAssignmentsInterval: REFRESH_ASSIGNMENTS
    })
    return SocketRunner.layer.pipe(
      Layer.merge(RunnerWatchLive(self, options.runner.healthCheck)),
      Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc))),
      Layer.provide(layerClientProtocol),
      Layer.provideMerge(SqlMessageStorage.layer),
      Layer.provide(GuardedSqlRunnerStorage),
      Layer.provide(config)
    )
  }))
  return runner.pipe(
    Layer.provide(NodeSocketServer.layer({ host: listenHost, port: options.runner.port })),
    Layer.provide(RpcSerialization.layerSchemaBinary())
  )
}

/**
 * The one runner of the embedded database (one process owns it): no transport, no health checks. Its address is
 * fixed, so a restart takes the shard leases the previous process left back at once (on PGlite shard locks are
 * table leases keyed by the address, not advisory locks that end with their session). Its lock storage knows it is
 * on PGlite's one session (EngineLocks.ts, GuardedPgliteRunnerStorage), without which a stop during a burst of
 * workflows never got its shards released.
 */
const EmbeddedRunnerLive = (options: EngineOptions) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(SqlMessageStorage.layer),
    Layer.provide([GuardedPgliteRunnerStorage, RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer({
      runnerAddress: Option.some(RunnerAddress.make("embedded", 0)),
      shardLockDisableAdvisory: true,
      shardLockRefreshInterval: options.lockRefresh,
      entityMessagePollInterval: options.poll
    }))
  )

/**
 * The engine with its runner. After a database outage it interrupts its workflows, takes its shards again and replays
 * each workflow from storage; the lock storage is guarded so that this always happens (EngineLocks.ts). `lockRefresh`
 * (WORKFLOW_LOCK_REFRESH_SECONDS; effect/cluster's default is 10 s) paces it: the locks are confirmed that often,
 * which is how an outage is noticed (at the latest one interval after the database is back), the unhealthy lock
 * storage is probed that often, and one lock operation may take that long (the first one after an outage runs into
 * that deadline on the connection the outage broke). So every workflow is under way again within about three
 * intervals of the restore. Lock leases still expire after effect/cluster's 35 s.
 */
export const WorkflowEngineLive = (options: EngineOptions) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(options.embedded ? EmbeddedRunnerLive(options) : SocketRunnerLive(options)),
    Layer.provide(NodeCrypto.layerDigest)
  )
