// The scale bench's data, written by PostgreSQL itself (INSERT … SELECT over generate_series: one statement per table,
// no row crosses the wire): customers with realistic names, e-mails, companies and SIRETs, their orders, subscriptions
// (mostly active, some lapsed, suspended or ended), the VPS and game servers behind them with their addresses, a charge
// and its invoice each, sessions, and the audit trail. Ids are derived from the row number, so a second call with the
// next range extends the same base (25,000 subscriptions first, then up to 250,000).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { demoSeller } from "../domain/billing/invoicing/Seller.ts"

export interface SeedRange {
  /** Customers numbered `customersFrom` … `customersTo` (1-based, inclusive). */
  readonly customersFrom: number
  readonly customersTo: number
  /** Subscriptions (and their orders, services, charges, invoices) `subscriptionsFrom` … `subscriptionsTo`. */
  readonly subscriptionsFrom: number
  readonly subscriptionsTo: number
  readonly auditFrom: number
  readonly auditTo: number
  /** The customers the subscriptions and the audit rows are spread over: 1 … this. */
  readonly customerCount: number
  readonly now: Date
}

const FIRST = ["Marie", "Jean", "Pierre", "Sophie", "Camille", "Lucas", "Léa", "Hugo", "Chloé", "Louis", "Emma", "Gabriel",
  "Manon", "Arthur", "Inès", "Jules", "Sarah", "Nathan", "Julie", "Paul", "Anna", "Tom", "Alice", "Adam", "Zoé", "Noah",
  "Clara", "Ethan", "Lina", "Raphaël", "Mila", "Théo", "Rose", "Victor", "Eva", "Mathis", "Lou", "Axel", "Nina", "Sacha"]
const LAST = ["Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau", "Simon",
  "Laurent", "Lefebvre", "Michel", "Garcia", "David", "Bertrand", "Roux", "Vincent", "Fournier", "Morel", "Girard",
  "André", "Lefèvre", "Mercier", "Dupont", "Lambert", "Bonnet", "François", "Martinez", "Legrand", "Garnier", "Faure",
  "Rousseau", "Blanc", "Guerin", "Muller", "Henry", "Roussel", "Nicolas", "Perrin", "Morin", "Mathieu", "Clement",
  "Gauthier", "Dumont", "Lopez", "Fontaine", "Chevalier", "Robin"]
const COMPANY = ["Atelier", "Studio", "Solutions", "Conseil", "Informatique", "Réseaux", "Digital", "Logistique", "Services",
  "Technologies", "Création", "Web", "Data", "Cloud", "Systèmes", "Ingénierie", "Médias", "Games", "Hébergement", "Labs"]
const DOMAINS = ["gmail.com", "orange.fr", "free.fr", "outlook.fr", "laposte.net", "sfr.fr", "proton.me", "yahoo.fr",
  "icloud.com", "wanadoo.fr"]

const textArray = (values: ReadonlyArray<string>) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(",")}]::text[]`

/** A uuid from a kind digit and a row number: `0000000k-0000-4000-8000-<n, hex>`. */
const uuidOf = (kind: number, n: string) =>
  `('${kind.toString(16).padStart(8, "0")}-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`

export const ids = {
  user: (n: string) => uuidOf(1, n),
  order: (n: string) => uuidOf(2, n),
  subscription: (n: string) => uuidOf(3, n),
  service: (n: string) => uuidOf(4, n),
  ledger: (n: string) => uuidOf(5, n),
  invoice: (n: string) => uuidOf(6, n),
  session: (n: string) => uuidOf(7, n)
}

/** The customer of subscription `j`: spread over every customer, about 2.5 each, not in order. */
const ownerOf = (j: string, customers: number) => `(((${j})::bigint * 40503) % ${customers}) + 1`

export const seed = (range: SeedRange) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = range.now.toISOString()
    const customers = range.customerCount
    const run = (statement: string) => sql.unsafe(statement).pipe(Effect.asVoid)
    // A bcrypt hash nobody signs in with (the bench reads, it does not sign in).
    const hash = "$2b$10$CwTycUXWue0Thq9StjUM0uJ8kYIh8.rA8zEGzjP7Lg5R2XcQ2EuXG"
    yield* run(`
      INSERT INTO users (id, email, account_type, first_name, last_name, company_name, siret, language, password_hash, created_at, role)
      SELECT ${ids.user("i")},
             lower(translate(f, 'éèëêïîçâàôöüû', 'eeeeiicaaoouu') || '.' || translate(l, 'éèëêïîçâàôöüû', 'eeeeiicaaoouu')) || i || '@' || d,
             CASE WHEN i % 3 = 0 THEN 'professional' ELSE 'personal' END,
             f, l,
             CASE WHEN i % 3 = 0 THEN c || ' ' || l ELSE NULL END,
             CASE WHEN i % 3 = 0 THEN lpad(((i::bigint * 7919 * 104729) % 99999999999999)::text, 14, '0') ELSE NULL END,
             CASE WHEN i % 7 = 0 THEN 'en' ELSE 'fr' END,
             '${hash}',
             '${now}'::timestamptz - (i % 1000) * interval '1 day',
             'customer'
      FROM generate_series(${range.customersFrom}, ${range.customersTo}) AS i,
           LATERAL (SELECT (${textArray(FIRST)})[1 + (i * 31) % ${FIRST.length}] AS f,
                           (${textArray(LAST)})[1 + (i * 17 + i / 7) % ${LAST.length}] AS l,
                           (${textArray(COMPANY)})[1 + (i * 13) % ${COMPANY.length}] AS c,
                           (${textArray(DOMAINS)})[1 + (i * 7) % ${DOMAINS.length}] AS d) AS pick`)
    // Orders first (a subscription names its order), completed, created over the last two years.
    const j = `generate_series(${range.subscriptionsFrom}, ${range.subscriptionsTo}) AS j`
    const kind = `CASE WHEN j % 5 < 3 THEN 'vps' ELSE 'game' END`
    const plan = `CASE WHEN j % 5 < 3 THEN 'vps-s' ELSE 'mc-2g' END`
    const created = `('${now}'::timestamptz - (j % 730) * interval '1 day' - (j % 1440) * interval '1 minute')`
    yield* run(`
      INSERT INTO orders (id, user_id, plan_id, kind, options, status, step, total_steps, step_name, created_at, updated_at, service_id)
      SELECT ${ids.order("j")}, ${ids.user(ownerOf("j", customers))}, ${plan}, ${kind}, '{}'::jsonb, 'completed', 5, 5, 'Ready',
             ${created}, ${created}, ${ids.service("j")}
      FROM ${j}`)
    // 1 in 50 suspended, 1 in 50 ended, 1 in 100 lapsed (its period ended: the sweep's work), the rest active.
    const status = `CASE WHEN j % 50 = 0 THEN 'suspended' WHEN j % 50 = 1 THEN 'terminated' ELSE 'active' END`
    const periodEnd = `CASE WHEN j % 100 = 2 THEN '${now}'::timestamptz - (j % 5 + 1) * interval '1 hour'
                            WHEN j % 50 IN (0, 1) THEN '${now}'::timestamptz - (j % 9 + 1) * interval '1 day'
                            ELSE '${now}'::timestamptz + (j % 30 + 1) * interval '1 day' END`
    yield* run(`
      INSERT INTO subscriptions (id, user_id, plan_id, kind, order_id, status, current_period_end, service_id, created_at)
      SELECT ${ids.subscription("j")}, ${ids.user(ownerOf("j", customers))}, ${plan}, ${kind}, ${ids.order("j")}, ${status},
             ${periodEnd}, ${ids.service("j")}, ${created}
      FROM ${j}`)
    yield* run(`UPDATE orders SET subscription_id = ('00000003' || substr(id::text, 9))::uuid
                WHERE id BETWEEN ${ids.order(String(range.subscriptionsFrom))} AND ${ids.order(String(range.subscriptionsTo))}`)
    // The services: a suspended one's grace window ends within 14 days (or ended already, 1 in 10).
    const serviceStatus = (suspended: string, ended: string, live: string) =>
      `CASE WHEN j % 50 = 0 THEN '${suspended}' WHEN j % 50 = 1 THEN '${ended}' ELSE '${live}' END`
    const grace = `CASE WHEN j % 50 = 0 THEN '${now}'::timestamptz + (j % 15 - 1) * interval '1 day' ELSE NULL END`
    yield* run(`
      INSERT INTO vps (id, user_id, subscription_id, order_id, plan_id, cluster, node, vmid, hostname, template_id, address, status,
                       grace_until, root_password_sealed, created_at, destroyed_at)
      SELECT ${ids.service("j")}, ${ids.user(ownerOf("j", customers))}, ${ids.subscription("j")}, ${ids.order("j")}, 'vps-s',
             'pve-' || (j % 4), 'node-' || (j % 16), 100000 + j, 'vps-' || j, 'debian-12',
             '10.' || ((j >> 16) & 255) || '.' || ((j >> 8) & 255) || '.' || (j & 255),
             ${serviceStatus("suspended", "destroyed", "running")}, ${grace}, 'v1:sealed', ${created},
             CASE WHEN j % 50 = 1 THEN '${now}'::timestamptz ELSE NULL END
      FROM ${j} WHERE j % 5 < 3`)
    yield* run(`
      INSERT INTO game_servers (id, user_id, subscription_id, order_id, plan_id, panel, panel_server_id, uuid, identifier, name, node,
                                allocation_id, address, status, grace_until, created_at, deleted_at)
      SELECT ${ids.service("j")}, ${ids.user(ownerOf("j", customers))}, ${ids.subscription("j")}, ${ids.order("j")}, 'mc-2g',
             'panel-' || (j % 3), j, md5(j::text), lpad(to_hex(j), 8, '0'), 'Minecraft ' || j, j % 8, j,
             '198.51.' || ((j >> 8) & 255) || '.' || (j & 255) || ':' || (25565 + j % 50),
             ${serviceStatus("suspended", "deleted", "active")}, ${grace}, ${created},
             CASE WHEN j % 50 = 1 THEN '${now}'::timestamptz ELSE NULL END
      FROM ${j} WHERE j % 5 >= 3`)
    // The first month's charge of each, and its invoice.
    const cents = `CASE WHEN j % 5 < 3 THEN 599 + (j % 4) * 500 ELSE 899 + (j % 3) * 600 END`
    yield* run(`
      INSERT INTO ledger_entries (id, user_id, subscription_id, order_id, kind, amount_cents, reference, created_at)
      SELECT ${ids.ledger("j")}, ${ids.user(ownerOf("j", customers))}, ${ids.subscription("j")}, ${ids.order("j")}, 'charge',
             ${cents}, 'pi_seed_' || j, ${created}
      FROM ${j}`)
    yield* run(`
      INSERT INTO invoice_series (series, last_sequence, last_issued_at) VALUES ('F', ${range.subscriptionsTo}, '${now}')
      ON CONFLICT (series) DO UPDATE SET last_sequence = excluded.last_sequence`)
    // Each invoice as issued: its line and VAT at 20 %, the seller then, the buyer, how it was paid.
    const vat = `(${cents}) / 5`
    const seller = JSON.stringify(demoSeller).replace(/'/g, "''")
    yield* run(`
      INSERT INTO invoices (id, user_id, kind, series, sequence, series_year, number, issued_at, currency, language, lines,
                            vat_breakdown, total_excluding_vat_cents, vat_cents, total_including_vat_cents, mentions,
                            counts_towards_oss, seller, buyer, settlement, ledger_kind, ledger_reference, subscription_id, order_id)
      SELECT ${ids.invoice("j")}, ${ids.user(ownerOf("j", customers))}, 'invoice', 'F', j, 2026, 'F-' || lpad(j::text, 7, '0'),
             ${created}, 'EUR', 'fr',
             jsonb_build_array(jsonb_build_object('description', ${plan} || ', 1 mois', 'quantity', 1,
               'unitPriceExcludingVatCents', ${cents}, 'vatCategory', 'S', 'vatRateBasisPoints', 2000, 'totalExcludingVatCents', ${cents})),
             jsonb_build_array(jsonb_build_object('vatCategory', 'S', 'vatRateBasisPoints', 2000, 'baseCents', ${cents}, 'vatCents', ${vat})),
             ${cents}, ${vat}, (${cents}) + ${vat}, '[]'::jsonb, false, '${seller}'::jsonb,
             jsonb_build_object('name', 'Client ' || j, 'companyName', NULL, 'vatNumber', NULL, 'siren', NULL, 'business', false,
               'email', 'client' || j || '@example.fr',
               'address', jsonb_build_object('line1', j || ' rue de la République', 'line2', NULL, 'postcode', lpad((j % 95000 + 1000)::text, 5, '0'),
                 'city', 'Lyon', 'country', 'FR')),
             jsonb_build_object('at', to_char(${created} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'means', 'card', 'reference', 'pi_seed_' || j),
             'charge', 'pi_seed_' || j, ${ids.subscription("j")}, ${ids.order("j")}
      FROM ${j}`)
    // Half the customers have a live session.
    yield* run(`
      INSERT INTO sessions (id, user_id, remember_me, created_at, last_seen_at, expires_at, user_agent, address)
      SELECT ${ids.session("i")}, ${ids.user("i")}, i % 4 = 0, '${now}'::timestamptz - interval '1 hour', '${now}',
             '${now}'::timestamptz + interval '12 hours', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
             '192.0.2.' || (i % 250)
      FROM generate_series(${range.customersFrom}, ${range.customersTo}) AS i WHERE i % 2 = 0`)
    // The audit trail: sign-ins mostly, failed ones, consoles, power, orders and payments, over the last year.
    const actions = ["auth.sign_in", "auth.sign_in", "auth.sign_in", "auth.sign_in_failed", "vps.power", "vps.console_opened",
      "game.power", "game.console_opened", "game.files_changed", "order.placed", "payment.succeeded", "auth.password_reset"]
    yield* run(`
      INSERT INTO audit_events (at, actor_id, actor_role, action, subject_user_id, target_type, target_id, address, details)
      SELECT '${now}'::timestamptz - ((${range.auditTo} - k) * interval '30 seconds'),
             CASE WHEN a = 'payment.succeeded' THEN NULL ELSE u END,
             CASE WHEN a = 'payment.succeeded' THEN 'system' ELSE 'customer' END,
             a, u, 'user', u::text, '192.0.2.' || (k % 250), NULL
      FROM generate_series(${range.auditFrom}, ${range.auditTo}) AS k,
           LATERAL (SELECT ${ids.user(`((k::bigint * 7919) % ${customers}) + 1`)} AS u,
                           (${textArray(actions)})[1 + k % ${actions.length}] AS a) AS pick`)
    yield* run("ANALYZE")
  })
