// The admin CLI (`npm run admin -- …`): migrations, the sandbox outbox, sealed upstream credentials, the catalog, the
// reconciliation of our records with the upstreams, and the operators' roles.
import { NodeHttpClient, NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Context, Effect, FileSystem, Layer, Option, Redacted, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as AesGcmSecretBox from "../adapters/crypto/AesGcmSecretBox.ts"
import { runMigrations } from "../adapters/postgres/Migrations.ts"
import * as PgCatalog from "../adapters/postgres/PgCatalog.ts"
import * as PgGameServerRecords from "../adapters/postgres/PgGameServerRecords.ts"
import * as PgOrders from "../adapters/postgres/PgOrders.ts"
import * as PgProxmoxVmids from "../adapters/postgres/PgProxmoxVmids.ts"
import * as PgAuditLog from "../adapters/postgres/PgAuditLog.ts"
import * as PgInvoices from "../adapters/postgres/PgInvoices.ts"
import { exportPeriod, ossTotalOf, parisMidnight } from "../domain/billing/invoicing/accountantExport.ts"
import type { Invoices } from "../ports/Invoices.ts"
import * as PgOutbox from "../adapters/postgres/PgOutbox.ts"
import * as PgNoticeRecords from "../adapters/postgres/PgNoticeRecords.ts"
import * as PgUnitOfWork from "../adapters/postgres/PgUnitOfWork.ts"
import * as PgUsers from "../adapters/postgres/PgUsers.ts"
import * as PgUpstreamSecrets from "../adapters/postgres/PgUpstreamSecrets.ts"
import * as PgVpsRecords from "../adapters/postgres/PgVpsRecords.ts"
import * as ProxmoxVirtualization from "../adapters/proxmox/ProxmoxVirtualization.ts"
import * as PterodactylGamePanel from "../adapters/pterodactyl/PterodactylGamePanel.ts"
import { grantRole, revokeRole } from "../domain/account/StaffRoles.ts"
import { applyCatalogFile, formatSummary } from "../domain/catalog/applyCatalog.ts"
import type { AuditLog } from "../ports/AuditLog.ts"
import type { UnitOfWork } from "../ports/UnitOfWork.ts"
import type { Users } from "../ports/Users.ts"
import { retireEntry } from "../domain/catalog/retireEntry.ts"
import { formatReport, reconcile } from "../domain/reconcile/Reconciler.ts"
import { VpsSettings } from "../domain/vps/VpsSettings.ts"
import { HANDLED_EVENTS } from "../adapters/stripe/notifications.ts"
import { apiAt, type StripeApi } from "../adapters/stripe/StripePaymentGateway.ts"
import { registerWebhookEndpoint } from "../adapters/stripe/StripeWebhookEndpoints.ts"
import { listSecrets, readSecret, removeSecret, rotateSecrets, storeSecret, validName } from "../domain/secrets/UpstreamCredentials.ts"
import { Catalog, type ClusterEntry } from "../ports/Catalog.ts"
import type { GamePanel } from "../ports/GamePanel.ts"
import type { GameServerRecords } from "../ports/GameServerRecords.ts"
import type { Orders } from "../ports/Orders.ts"
import type { Virtualization } from "../ports/Virtualization.ts"
import type { VpsRecords } from "../ports/VpsRecords.ts"
import { Outbox } from "../ports/Outbox.ts"
import { NoticeRecords } from "../ports/NoticeRecords.ts"
import type { SecretBox } from "../ports/SecretBox.ts"
import type { UpstreamSecrets } from "../ports/UpstreamSecrets.ts"
import type { Settings } from "./Config.ts"
import { PRIVATE_UMASK } from "./DataDir.ts"
import * as GamePanelsLive from "./GamePanelsLive.ts"
import { DatabaseLive, LoggerLive, vpsSettings } from "./Layers.ts"
import * as ProxmoxClustersLive from "./ProxmoxClustersLive.ts"
import { loadSettings, startupFailure } from "./loadSettings.ts"
import { PREVIOUS_WEBHOOK_SECRET, rotateWebhookSecret, SECRET_KEY, WEBHOOK_SECRET } from "./StripeCredentials.ts"

export class StripeKeyMissing extends Schema.TaggedError<StripeKeyMissing>()("StripeKeyMissing", {}) {
  override get message() {
    return `No Stripe key: store it first with \`npm run admin -- secrets put ${SECRET_KEY}\` (a restricted key is recommended).`
  }
}

/** Where a secret's value comes from: never the command line, which other users can read in `ps`. */
export class SecretInput extends Context.Service<SecretInput, {
  readonly read: Effect.Effect<Redacted.Redacted<string>>
}>()("zh/cli/SecretInput") {
  static readonly stdin = Layer.succeed(SecretInput, {
    read: Effect.promise(async () => {
      const chunks: Array<Buffer> = []
      for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
      return Redacted.make(Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, ""))
    })
  })
}

export type AdminServices = Outbox | UpstreamSecrets | SecretBox

/** The services of the admin commands, on the same database as the server (shared when it runs). */
export const AdminServicesLive = (settings: Settings) =>
  Layer.mergeAll(
    PgOutbox.layer,
    PgNoticeRecords.layer,
    PgUpstreamSecrets.layer,
    PgCatalog.layer,
    AesGcmSecretBox.layer(settings.encryptionKeys)
  ).pipe(
    Layer.provide(DatabaseLive(settings, "cli"))
  )

export type StaffServices = Users | UnitOfWork | AuditLog

/** What `users grant | revoke` change: the users and the audit log, in one transaction. */
export const StaffServicesLive = (settings: Settings) =>
  Layer.mergeAll(PgUsers.layer, PgUnitOfWork.layer, PgAuditLog.layer).pipe(Layer.provide(DatabaseLive(settings, "cli")))

/** `users grant EMAIL admin|support`, `users revoke EMAIL`: operators' roles, each change audited. */
const usersCommand = <E>(services: Layer.Layer<StaffServices, E>) => {
  const grant = Command.make("grant", {
    email: Argument.String("email"),
    role: Argument.Literals("role", ["admin", "support"])
  }, ({ email, role }) =>
    Effect.flatMap(grantRole(email, role), ({ previous, user }) =>
      Console.log(previous === role ? `${user.email} is already ${role}.` : `${user.email} is now ${role} (was ${previous}).`))).pipe(
      Command.withDescription("Make an account support (reads everything, suspends, resends e-mails) or admin (everything)"),
      Command.provide(services)
    )
  const revoke = Command.make("revoke", { email: Argument.String("email") }, ({ email }) =>
    Effect.flatMap(revokeRole(email), ({ previous, user }) =>
      Console.log(previous === "customer" ? `${user.email} is a customer already.` : `${user.email} is a customer again (was ${previous}).`))).pipe(
      Command.withDescription("Take an account's operator role away: a customer again"),
      Command.provide(services)
    )
  return Command.make("users").pipe(
    Command.withDescription("Operators: grant or revoke the support and admin roles (audited)"),
    Command.withSubcommands([grant, revoke])
  )
}

/** What `invoices export | oss` read: the issued documents. */
export const InvoicesServicesLive = (settings: Settings) => PgInvoices.layer.pipe(Layer.provide(DatabaseLive(settings, "cli")))

/** A French day as the operator types it; anything else stops the command with one line. */
const Day = (name: string) =>
  Flag.String(name).pipe(
    Flag.withDescription("a day, YYYY-MM-DD (French time)"),
    Flag.withSchema(Schema.String.check(Schema.makeFilter((text: string) => {
      try {
        parisMidnight(text)
        return true
      } catch {
        return "must be a date such as 2026-01-31"
      }
    })))
  )

/** `notices`: the customer e-mails not sent yet, for an operator (see README "Customer e-mails"). */
const noticesCommand = <E>(services: Layer.Layer<NoticeRecords, E>) =>
  Command.make("notices", {
    limit: Flag.Int("limit").pipe(Flag.withDescription("how many, newest first"), Flag.withDefault(20))
  }, ({ limit }) =>
    Effect.gen(function*() {
      const unsent = yield* (yield* NoticeRecords).unsent(limit)
      if (unsent.length === 0) return yield* Console.log("Every customer e-mail has been sent.")
      for (const n of unsent) {
        const next = n.nextAttemptAt === null ? "given up" : `next attempt ${n.nextAttemptAt.toISOString()}`
        const error = n.lastError === null ? "" : `  last error: ${n.lastError}`
        yield* Console.log(`${n.key}  told ${n.createdAt.toISOString()}  ${n.attempts} attempt(s), ${next}${error}`)
      }
    })).pipe(
      Command.withDescription("List the customer e-mails not sent yet: waiting, failing (with the last error) or given up"),
      Command.provide(services)
    )

/** `invoices export --from --to` (CSV on standard output) and `invoices oss [--year]`. */
const invoicesCommand = <E>(services: Layer.Layer<Invoices, E>) => {
  const exportCommand = Command.make("export", { from: Day("from"), to: Day("to") }, ({ from, to }) =>
    Effect.flatMap(exportPeriod(from, to), (csv) => Console.log(csv.trimEnd()))).pipe(
      Command.withDescription("Invoices and credit notes issued from --from to --to (both included) as CSV for the accountant: one row per document and VAT rate, then totals per customer country and rate"),
      Command.provide(services)
    )
  const oss = Command.make("oss", {
    year: Flag.Int("year").pipe(Flag.withDescription("the calendar year (default: this one)"), Flag.optional)
  }, ({ year }) =>
    Effect.gen(function*() {
      const y = Option.getOrElse(year, () => new Date().getUTCFullYear())
      const cents = yield* ossTotalOf(y)
      yield* Console.log(`OSS ${y}: ${(cents / 100).toFixed(2)} EUR of cross-border consumer sales within the EU (excluding VAT, credit notes deducted).`)
    })).pipe(
      Command.withDescription("The year's cross-border consumer sales within the EU, as the OSS threshold counts them"),
      Command.provide(services)
    )
  return Command.make("invoices").pipe(
    Command.withDescription("Invoices and credit notes for the accountant"),
    Command.withSubcommands([exportCommand, oss])
  )
}

export type ReconcileServices = Catalog | Orders | VpsRecords | GameServerRecords | VpsSettings | Virtualization | GamePanel

/**
 * What `reconcile` reads: our records, and the clusters and panels of the catalog through their adapters (the sandbox
 * upstreams are reached where a running server serves them).
 */
export const ReconcileServicesLive = (settings: Settings) =>
  Layer.mergeAll(
    ProxmoxVirtualization.layerWith({ vmidRange: { from: settings.vmidRangeStart, to: settings.vmidRangeEnd } }).pipe(
      Layer.provide(ProxmoxClustersLive.layer)
    ),
    PterodactylGamePanel.layer.pipe(Layer.provide([GamePanelsLive.layer, NodeHttpClient.layerUndici])),
    Layer.succeed(VpsSettings, vpsSettings(settings))
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(
      PgCatalog.layer,
      PgOrders.layer,
      PgVpsRecords.layer,
      PgProxmoxVmids.layer,
      PgGameServerRecords.layer,
      PgUpstreamSecrets.layer,
      AesGcmSecretBox.layer(settings.encryptionKeys)
    )),
    Layer.provide(DatabaseLive(settings, "cli"))
  )

/** `reconcile [--json]`: the report, for people or for a program; nothing is changed upstream or here. */
const reconcileCommand = <E>(services: Layer.Layer<ReconcileServices, E>) =>
  Command.make("reconcile", {
    json: Flag.Boolean("json").pipe(Flag.withDescription("print the report as JSON"), Flag.withDefault(false))
  }, ({ json }) =>
    Effect.gen(function*() {
      const report = yield* reconcile
      if (json) return yield* Console.log(JSON.stringify(report, null, 2))
      for (const line of formatReport(report)) yield* Console.log(line)
    })).pipe(
      Command.withDescription(
        "Compare our records with the clusters and panels: orphan VMs and panel servers, services whose upstream resource is gone, pending cleanups (reports only)"
      ),
      Command.provide(services)
    )

const euros = (cents: number) => `${(cents / 100).toFixed(2)} €`
const retiredMark = (entry: { readonly retired: boolean }) => (entry.retired ? "  (retired)" : "")
const section = (title: string, lines: ReadonlyArray<string>) => [title, ...(lines.length === 0 ? ["  (none)"] : lines)]
const clusterAuth = (c: ClusterEntry) =>
  [c.tokenId === null ? null : `token ${c.tokenId}`, c.username === null ? null : `password ${c.username}`].filter((a) => a !== null).join(" + ")
const clusterTls = (c: ClusterEntry) =>
  c.tls.insecure ? "tls: INSECURE" : c.tls.ca !== null ? "tls: own CA" : c.tls.fingerprint !== null ? `tls: pinned ${c.tls.fingerprint}` : "tls: system CAs"

/** The whole catalog, for people: names, sizes, prices, pool usage. Credentials are not in the catalog at all. */
const catalogListing = Effect.gen(function*() {
  const catalog = yield* Catalog
  const [plans, templates, pools, clusters, panels] = yield* Effect.all([
    catalog.allPlans, catalog.allTemplates, catalog.ipPools, catalog.clusters, catalog.panels
  ])
  return [
    ...section("Plans", plans.map((p) => `  ${p.id}  ${p.kind}  "${p.name}"  ${euros(p.priceCents)}/month  ${
      p.kind === "vps"
        ? `${p.vcpu} vCPU, ${p.ramMiB} MiB RAM, ${p.diskGiB} GiB disk, ${p.snapshotLimit} snapshots; templates ${p.templates.join(", ")}`
        : `${p.memoryMiB} MiB RAM, ${p.diskMiB} MiB disk, ${p.cpuPercent}% CPU; panel ${p.panel}, egg ${p.eggId}`
    }${retiredMark(p)}`)),
    ...section("OS templates", templates.map((t) => `  ${t.id}  "${t.name}"  ${t.cluster}/${t.node}  vmid ${t.vmid}${retiredMark(t)}`)),
    ...section("IP pools", pools.map((p) =>
      `  ${p.id}  ${p.cluster}  ${p.cidr}  gateway ${p.gateway}  ${p.bridge}  nodes ${p.nodes.join(", ")}  free ${p.free}, assigned ${p.assigned}${retiredMark(p)}`)),
    ...section("Proxmox clusters", clusters.map((c) => `  ${c.name}  ${c.url}  ${clusterAuth(c)}  ${clusterTls(c)}${retiredMark(c)}`)),
    ...section("Pterodactyl panels", panels.map((p) => `  ${p.name}  ${p.url}${retiredMark(p)}`))
  ]
})

/** `apply FILE` (API.md's `npm run admin -- apply FILE`), also `catalog apply FILE`. */
const applyCommand = <E>(services: Layer.Layer<AdminServices | Catalog, E>) =>
  Command.make("apply", {
    file: Argument.String("file").pipe(Argument.withDescription("the catalog file (JSON); caFile paths are relative to it"))
  }, ({ file }) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const summary = yield* applyCatalogFile(file, (path) => fs.readFileString(path))
      for (const line of formatSummary(summary)) yield* Console.log(line)
    })).pipe(
      Command.withDescription("Apply a catalog file (idempotent; entries it no longer lists stay until retired)"),
      Command.provide(services)
    )

/** `catalog apply | list | retire`, each leaf provided with `services`. */
const catalogCommand = <E>(services: Layer.Layer<AdminServices | Catalog, E>) => {
  const apply = applyCommand(services)

  const list = Command.make("list", {}, () =>
    Effect.flatMap(catalogListing, (lines) => Effect.forEach(lines, (line) => Console.log(line), { discard: true }))).pipe(
      Command.withDescription("List plans, templates, IP pools (free/assigned), clusters and panels; never a credential"),
      Command.provide(services)
    )

  const retire = Command.make("retire", {
    kind: Argument.Literals("kind", ["plan", "template", "ipPool", "cluster", "panel"]),
    id: Argument.String("id")
  }, ({ id, kind }) =>
    Effect.andThen(retireEntry(kind, id), Console.log(`Retired ${kind} "${id}": no longer sold or chosen; services using it keep working.`))).pipe(
      Command.withDescription("Retire a catalog entry"),
      Command.provide(services)
    )

  return Command.make("catalog").pipe(
    Command.withDescription("The catalog: plans, OS templates, IP pools, Proxmox clusters, Pterodactyl panels"),
    Command.withSubcommands([apply, list, retire])
  )
}

/**
 * The admin commands, each leaf provided with `services` (the live ones, or fakes in tests). The `catalog` group
 * is there when `catalog` gives it a Catalog store.
 */
export const makeAdmin = <E>(
  services: Layer.Layer<AdminServices | SecretInput, E>,
  migrateDatabase: Effect.Effect<ReadonlyArray<readonly [number, string]>, E>,
  catalog?: Layer.Layer<Catalog, E>,
  reconciler?: Layer.Layer<ReconcileServices, E>,
  /** Another Stripe API than Stripe's own (STRIPE_API_URL: the sandbox Stripe). */
  stripeApi?: StripeApi,
  staff?: Layer.Layer<StaffServices, E>,
  invoices?: Layer.Layer<Invoices, E>,
  noticeRecords?: Layer.Layer<NoticeRecords, E>
) => {

  const outbox = Command.make("outbox", {
    limit: Flag.Int("limit").pipe(Flag.withDescription("how many messages, newest first"), Flag.withDefault(5)),
    html: Flag.Boolean("html").pipe(Flag.withDescription("print the HTML part too"), Flag.withDefault(false))
  }, ({ html, limit }) =>
    Effect.gen(function*() {
      const messages = yield* (yield* Outbox).latest(limit)
      if (messages.length === 0) return yield* Console.log("The outbox is empty.")
      for (const m of messages) {
        yield* Console.log(`#${m.id}  ${m.sentAt.toISOString()}  to ${m.to}\nSubject: ${m.subject}\n\n${m.text}\n`)
        if (html) yield* Console.log(`${m.html}\n`)
      }
    })).pipe(
      Command.withDescription("Show the latest messages of the sandbox outbox (mail sent without SMTP_URL)"),
      Command.provide(services)
    )

  const put = Command.make("put", {
    name: Argument.String("name").pipe(Argument.withDescription("e.g. proxmox:pve:password")),
    fromEnv: Flag.String("from-env").pipe(
      Flag.withDescription("read the value from this environment variable instead of standard input"),
      Flag.optional
    )
  }, ({ fromEnv, name }) =>
    Effect.gen(function*() {
      yield* validName(name)
      const value = Option.isSome(fromEnv)
        ? Redacted.make(process.env[fromEnv.value] ?? "")
        : yield* (yield* SecretInput).read
      yield* storeSecret(name, value)
      yield* Console.log(`Stored secret "${name}" (sealed).`)
    })).pipe(
      Command.withDescription("Store or replace a sealed upstream credential; the value is read from standard input"),
      Command.provide(services)
    )

  const list = Command.make("list", {}, () =>
    Effect.gen(function*() {
      const secrets = yield* listSecrets
      if (secrets.length === 0) return yield* Console.log("No secrets stored.")
      for (const s of secrets) yield* Console.log(`${s.name}\t${s.updatedAt.toISOString()}`)
    })).pipe(Command.withDescription("List stored secrets (names and dates only)"), Command.provide(services))

  const remove = Command.make("remove", { name: Argument.String("name") }, ({ name }) =>
    Effect.andThen(removeSecret(name), Console.log(`Removed secret "${name}".`))).pipe(
      Command.withDescription("Remove a stored secret"),
      Command.provide(services)
    )

  const rotate = Command.make("rotate", {}, () =>
    Effect.flatMap(rotateSecrets, (n) => Console.log(`Re-sealed ${n} secret(s) under the current key.`))).pipe(
      Command.withDescription("Re-seal every secret under ENCRYPTION_KEY (old keys in ENCRYPTION_KEYS_PREVIOUS)"),
      Command.provide(services)
    )

  const registerWebhook = Command.make("register-webhook", {
    url: Argument.String("url").pipe(Argument.withDescription("the public address of POST /api/payments/stripe/webhook"))
  }, ({ url }) =>
    Effect.gen(function*() {
      const secretKey = yield* readSecret(SECRET_KEY).pipe(
        Effect.catchTag("SecretNotFound", () =>
          Effect.fail(new StripeKeyMissing()))
      )
      const endpoint = yield* registerWebhookEndpoint({ secretKey, api: stripeApi, url })
      yield* rotateWebhookSecret(endpoint.secret)
      yield* Console.log(
        `Registered webhook endpoint ${endpoint.id} for ${HANDLED_EVENTS.join(", ")}; its secret is stored as ` +
          `"${WEBHOOK_SECRET}" (sealed), the one before it as "${PREVIOUS_WEBHOOK_SECRET}".`
      )
    })).pipe(
      Command.withDescription("Register this platform's webhook endpoint with Stripe and store its signing secret"),
      Command.provide(services)
    )

  const migrate = Command.make("migrate", {}, () =>
    Effect.flatMap(migrateDatabase, (applied) =>
      Console.log(
        applied.length === 0
          ? "The database schema is up to date."
          : applied.map(([id, name]) => `applied migration ${id}_${name}`).join("\n")
      ))).pipe(Command.withDescription("Apply pending database migrations (DATABASE_URL, or the embedded database)"))

  return Command.make("zh-admin").pipe(
    Command.withDescription("ZH hosting platform administration"),
    Command.withSubcommands([
      migrate,
      outbox,
      Command.make("secrets").pipe(
        Command.withDescription("Sealed upstream credentials"),
        Command.withSubcommands([put, list, remove, rotate])
      ),
      Command.make("stripe").pipe(
        Command.withDescription("The Stripe account (its key is the secret stripe:secret-key)"),
        Command.withSubcommands([registerWebhook])
      ),
      ...(catalog === undefined
        ? []
        : [catalogCommand(Layer.merge(services, catalog)), applyCommand(Layer.merge(services, catalog))]),
      ...(reconciler === undefined ? [] : [reconcileCommand(reconciler)]),
      ...(staff === undefined ? [] : [usersCommand(staff)]),
      ...(invoices === undefined ? [] : [invoicesCommand(invoices)]),
      ...(noticeRecords === undefined ? [] : [noticesCommand(noticeRecords)])
    ])
  )
}

if (import.meta.main) {
  // An embedded database the CLI opens or migrates is created private, as the server's is.
  process.umask(PRIVATE_UMASK)
  const settings = Effect.cached(loadSettings).pipe(Effect.runSync)
  const services = Layer.unwrap(Effect.map(settings, (s) => Layer.merge(AdminServicesLive(s), SecretInput.stdin)))
  const migrateDatabase = Effect.flatMap(settings, (s) => runMigrations.pipe(Effect.provide(DatabaseLive(s, "migrate"))))
  const program = Effect.flatMap(settings, (s) =>
    Command.run(
      makeAdmin(
        services,
        migrateDatabase,
        services,
        ReconcileServicesLive(s),
        Option.getOrUndefined(Option.map(s.stripeApiUrl, apiAt)),
        StaffServicesLive(s),
        InvoicesServicesLive(s),
        services
      ),
      { version: "0.1.0" }
    ).pipe(
      Effect.provide(LoggerLive(s))
    )).pipe(
      Effect.catch((e) =>
        Effect.sync(() => {
          process.stderr.write(`${startupFailure(e)}\n`)
          process.exitCode = 1
        })
      ),
      Effect.provide(NodeServices.layer)
    )
  NodeRuntime.runMain(program)
}
