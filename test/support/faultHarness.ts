// The whole application against one sandbox Proxmox registered as the real cluster "lab", on a database that
// outlives the application: stop it and start it again (a process restart) on the same database, inject upstream
// faults, and read back everything an order may leave behind. The database stays up across restarts, as a
// PostgreSQL server does: one embedded PGlite per lab, never reopened (each WebAssembly instance opened and freed in
// one process is a chance of V8's JIT-page failure, nodejs/node#64500; reopening PGlite is the resume tests' part).
import { randomBytes } from "node:crypto"
import { Context, Duration, Effect, Layer, ManagedRuntime, Option, Redacted, References, Result, Schedule, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as AesGcmSecretBox from "../../adapters/crypto/AesGcmSecretBox.ts"
import { runMigrations } from "../../adapters/postgres/Migrations.ts"
import * as PgCatalog from "../../adapters/postgres/PgCatalog.ts"
import * as PgUpstreamSecrets from "../../adapters/postgres/PgUpstreamSecrets.ts"
import type { Settings } from "../../app/Config.ts"
import { embeddedDataDir, postgres } from "../../app/Database.ts"
import { type SandboxProxmox, sandboxProxmox, type SandboxVmState } from "../../adapters/proxmox/sandbox/SandboxProxmox.ts"
import { startScoped } from "./startScoped.ts"
import type { LedgerEntry, Order } from "../../domain/billing/Billing.ts"
import { placeOrder } from "../../domain/billing/Ordering.ts"
import { billedCustomer } from "./invoicing.ts"
import { paid } from "./checkout.ts"
import { clusterSecretNames } from "../../domain/catalog/catalogSecrets.ts"
import { hostAddresses, parseAddress, parseCidr } from "../../domain/catalog/ipv4.ts"
import { storeSecret } from "../../domain/secrets/UpstreamCredentials.ts"
import { vmName } from "../../domain/vps/ProvisionVps.ts"
import { Catalog } from "../../ports/Catalog.ts"
import { type AssignedAddress, IpAddresses } from "../../ports/IpAddresses.ts"
import { Ledger } from "../../ports/Ledger.ts"
import { Orders } from "../../ports/Orders.ts"
import { Users } from "../../ports/Users.ts"
import { VpsRecords } from "../../ports/VpsRecords.ts"
import { TestServer, testServerLayer, testSettings } from "./testServer.ts"
import { newUser } from "./userMother.ts"
import { vpsOptions, vpsPlan } from "./vpsEnv.ts"

const LAB = "lab"
const POOL = { id: "lab-public", cluster: LAB, cidr: "198.51.100.0/24", gateway: "198.51.100.1", bridge: "vmbr0", nodes: ["pve1", "pve2"] }

/** The pool's first `size` host addresses; 0 leaves it without a free one (assigned ones are kept by their holder). */
export const setPoolSize = (size: number) =>
  Effect.flatMap(Catalog, (catalog) =>
    catalog.upsertIpPool(POOL, hostAddresses(Result.getOrThrow(parseCidr(POOL.cidr)), parseAddress(POOL.gateway)!).slice(0, size)))

/** Registers the sandbox as the real cluster "lab", so the application starts no sandbox of its own. Idempotent. */
const seedLab = (url: string, poolSize: number) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    yield* catalog.upsertCluster({ name: LAB, url, username: "root@pam", tokenId: null, tls: { ca: null, fingerprint: null, insecure: false } })
    yield* storeSecret(clusterSecretNames(LAB).password, Redacted.make("sandbox")).pipe(Effect.orDie)
    for (const [node, vmid] of [["pve1", 9000], ["pve2", 9100]] as const) {
      yield* catalog.upsertTemplate({ id: "debian-12", name: "Debian 12", cluster: LAB, node, vmid })
    }
    yield* setPoolSize(poolSize)
    yield* catalog.upsertPlan(vpsPlan)
  })

/** A database kept between application runs: a fresh Postgres database, or a PGlite data directory on disk. */
const durableDatabase = async (url: string | undefined) => {
  if (url === undefined) {
    const dir = await mkdtemp(join(tmpdir(), "zh-faults-"))
    return {
      layer: embeddedDataDir(dir, { share: false }),
      databaseUrl: Option.none<Redacted.Redacted<string>>(),
      drop: () => rm(dir, { recursive: true, force: true })
    }
  }
  const name = `zh_faults_${Date.now()}_${randomBytes(4).toString("hex")}`
  const admin = (statement: string) =>
    Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(postgres(Redacted.make(url), 1))))
  await admin(`CREATE DATABASE ${name}`)
  const databaseUrl = Redacted.make(url.replace(/\/[^/?]*(\?.*)?$/, `/${name}$1`))
  return {
    layer: postgres(databaseUrl, 5),
    databaseUrl: Option.some(databaseUrl),
    drop: async () => void (await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  }
}

/**
 * The database migrated and seeded, built on its own and kept for the whole lab: each application run gets its context
 * (testServerLayer builds the layer it is given twice, and a second PGlite on the same directory refuses to open).
 */
const seededDatabase = (settings: Settings, database: Layer.Layer<SqlClient.SqlClient, unknown>, seed: ReturnType<typeof seedLab>) =>
  ManagedRuntime.make(
    Layer.effectDiscard(Effect.andThen(Effect.orDie(runMigrations), seed)).pipe(
      Layer.provide(Layer.mergeAll(PgCatalog.layer, PgUpstreamSecrets.layer, AesGcmSecretBox.layer(settings.encryptionKeys))),
      Layer.provideMerge(database)
    )
  )

const appRuntime = (settings: Settings, database: Context.Context<SqlClient.SqlClient>) =>
  ManagedRuntime.make(testServerLayer(settings, Layer.succeedContext(database)).pipe(
    // The failures are the point here: keep the adapter's and the engine's warnings out of the test output.
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
  ))

type AppRuntime = ReturnType<typeof appRuntime>
export type AppServices = ManagedRuntime.ManagedRuntime.Services<AppRuntime>

export interface Lab {
  readonly sandbox: SandboxProxmox
  run<A, E>(effect: Effect.Effect<A, E, AppServices>): Promise<A>
  /**
   * Stops the application as a process stop does (the engine lets the activity under way finish, nothing else runs),
   * then starts it again on the same database. Returns how many requests the sandbox had received when the
   * application was down.
   */
  restart(): Promise<number>
  close(): Promise<void>
}

export const startLab = async (options: {
  readonly databaseUrl: string | undefined
  readonly poolSize: number
  readonly taskDurations: Partial<Record<string, number>>
  /** PROXMOX_REQUEST_TIMEOUT_MS: what a hung request costs (the test settings' 5 s by default). */
  readonly requestTimeoutMs?: number
}): Promise<Lab> => {
  const sandbox = await startScoped(sandboxProxmox({ taskDurations: options.taskDurations }))
  const database = await durableDatabase(options.databaseUrl)
  // With a real Postgres the workflow engine takes its shard locks as advisory locks, as in production.
  const settings = testSettings({
    databaseUrl: database.databaseUrl,
    ...(options.requestTimeoutMs === undefined ? {} : { proxmoxRequestTimeoutMs: options.requestTimeoutMs })
  })
  const db = seededDatabase(settings, database.layer, seedLab(sandbox.url, options.poolSize))
  const start = async () => {
    const app = appRuntime(settings, await db.context())
    await app.runPromise(TestServer)
    return app
  }
  let running = await start().catch(async (e: unknown) => {
    await db.dispose()
    await sandbox.close()
    await database.drop()
    throw e
  })
  return {
    sandbox,
    run: (effect) => running.runPromise(effect),
    restart: async () => {
      await running.dispose()
      const stoppedAt = sandbox.control.requests().length
      running = await start()
      return stoppedAt
    },
    close: async () => {
      await running.dispose()
      await db.dispose()
      await sandbox.close()
      await database.drop()
    }
  }
}

// --- orders -------------------------------------------------------------------------------------------------

let customers = 0

/** A new customer (orders belong to a user) and their order of plan vps-s with debian-12, as placed. */
export const placeLabOrder = Effect.gen(function*() {
  const n = ++customers
  const registered = yield* (yield* Users).insert(newUser(`faults-${n}-${Date.now()}@example.com`))
  const user = yield* billedCustomer(registered.id)
  const order = yield* placeOrder(user, vpsPlan.id, vpsOptions(`faults-${n}`))
  // Paid on the sandbox Stripe's page; its webhook reaches the application's route on its own.
  yield* Effect.promise(() => paid({ id: order.id, status: order.status, checkoutUrl: order.checkoutUrl ?? "" }))
  return yield* pollUntil(orderOf(order.id), (o) => o.status !== "awaiting_payment", "20 seconds", (o) => `order ${o.id} still ${o.status}`)
})

const orderOf = (orderId: string) => Effect.map(Effect.flatMap(Orders, (orders) => orders.get(orderId)), Option.getOrThrow)

/** Polls until `until` holds; past `within`, a defect naming the last state seen. */
const pollUntil = <A, E, R>(read: Effect.Effect<A, E, R>, until: (a: A) => boolean, within: Duration.Input, what: (last: A) => string) =>
  read.pipe(
    Effect.repeat({ until, schedule: Schedule.spaced("5 millis") }),
    Effect.timeoutOrElse({
      duration: within,
      orElse: () => Effect.flatMap(read, (last) => Effect.die(new Error(`${what(last)} after ${Duration.format(Duration.fromInputUnsafe(within))}`)))
    })
  )

export const waitForOrder = (orderId: string, until: (order: Order) => boolean, within: Duration.Input) =>
  pollUntil(orderOf(orderId), until, within, (o) => `order ${orderId} still ${o.status} at step ${o.step}`)

/** Completed or failed, within `within`. */
export const settled = (orderId: string, within: Duration.Input) =>
  waitForOrder(orderId, (o) => o.status === "completed" || o.status === "failed", within)

/** A failed order's undo (which runs after its refund) done, within `within`. */
export const cleanedUp = (orderId: string, within: Duration.Input) =>
  pollUntil(
    Effect.map(Effect.flatMap(Orders, (orders) => orders.pendingCleanups), (all) => all.find((c) => c.orderId === orderId)),
    (pending) => pending === undefined,
    within,
    (pending) => `order ${orderId} still being cleaned up (${pending?.attempts ?? 0} failed attempts: ${pending?.lastError ?? ""})`
  )

const Vmids = Schema.Array(Schema.Struct({ vmid: Schema.Int }))
const Count = Schema.Array(Schema.Struct({ n: Schema.Int }))
const rows = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => (statement: Effect.Effect<unknown, unknown>) =>
  statement.pipe(Effect.flatMap(Schema.decodeUnknownEffect(schema)), Effect.orDie)

const allocatedVmids = (orderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => rows(Vmids)(sql`SELECT vmid FROM vmid_allocations WHERE holder = ${orderId}`))

/** The VMID step 1 gave the order, once it has one: faults on the VM's own paths can then be aimed at it alone. */
export const vmidOf = (orderId: string, within: Duration.Input) =>
  pollUntil(allocatedVmids(orderId), (r) => r.length > 0, within, () => `order ${orderId} has no VMID`).pipe(
    Effect.map((r) => r[0]!.vmid)
  )

// --- what an order leaves behind ----------------------------------------------------------------------------

export interface Remains {
  readonly order: Order
  readonly address: AssignedAddress | undefined
  readonly reservations: number
  readonly vmids: ReadonlyArray<number>
  readonly ledger: ReadonlyArray<LedgerEntry["kind"]>
  /** The sandbox's VMs made for the order: named after it (clone) or after its host name (configured). */
  readonly vms: ReadonlyArray<SandboxVmState>
  /** The VPS record's VMID, for a completed order. */
  readonly vpsVmid: number | undefined
  /** Clone requests the sandbox received for the order. */
  readonly clones: number
}

export const remains = (orderId: string, sandbox: SandboxProxmox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const order = yield* orderOf(orderId)
    const names = [vmName(orderId), String(order.options["hostname"])]
    const vps = order.serviceId === null ? Option.none() : yield* (yield* VpsRecords).get(order.serviceId)
    return {
      order,
      address: yield* (yield* IpAddresses).held(orderId),
      reservations: (yield* rows(Count)(sql`SELECT count(*)::int AS n FROM node_reservations WHERE holder = ${orderId}`))[0]?.n ?? 0,
      vmids: (yield* allocatedVmids(orderId)).map((r) => r.vmid),
      ledger: (yield* (yield* Ledger).forOrder(orderId)).map((e) => e.kind).sort(),
      vms: sandbox.control.state().vms.filter((vm) => !vm.template && names.includes(vm.name)),
      vpsVmid: Option.getOrUndefined(Option.map(vps, (v) => v.vmid)),
      clones: sandbox.control.requests().filter((r) => r.method === "POST" && /\/clone$/.test(r.path) && r.body["name"] === names[0]).length
    } satisfies Remains
  })

/** What the whole lab holds: orders in progress, reservations, held addresses and VMIDs, VPS records, VMs. */
export const census = (sandbox: SandboxProxmox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const count = (statement: Effect.Effect<unknown, unknown>) => Effect.map(rows(Count)(statement), (r) => r[0]?.n ?? 0)
    const vmids = (statement: Effect.Effect<unknown, unknown>) => Effect.map(rows(Vmids)(statement), (r) => r.map((v) => v.vmid).sort())
    return {
      unfinished: (yield* (yield* Orders).unfinished).length,
      reservations: yield* count(sql`SELECT count(*)::int AS n FROM node_reservations`),
      heldAddresses: yield* count(sql`SELECT count(*)::int AS n FROM ip_addresses WHERE holder IS NOT NULL`),
      heldVmids: yield* vmids(sql`SELECT vmid FROM vmid_allocations WHERE holder IS NOT NULL`),
      vpsVmids: yield* vmids(sql`SELECT vmid FROM vps WHERE destroyed_at IS NULL`),
      vms: sandbox.control.state().vms.filter((vm) => !vm.template).map((vm) => vm.vmid).sort()
    }
  })
