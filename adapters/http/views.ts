// The shapes the API answers with: the server's contract encodes its answers with these schemas, and the panel
// (app/web) derives its types from them (`typeof UserView.Type`, imported as types only, so no schema code reaches
// the bundle). Only `effect/Schema` here: nothing of the server may follow into the panel's type-check.
import { Schema } from "effect"

/** Every refusal: `{ "error": ErrorBody }`. */
export const ErrorBody = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  details: Schema.optionalKey(Schema.Unknown)
})
export type ErrorBody = typeof ErrorBody.Type

// --- accounts ---

export const Language = Schema.Literals(["fr", "en"])
export const Theme = Schema.Literals(["light", "dark"])

export const UserView = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  accountType: Schema.Literals(["personal", "professional"]),
  firstName: Schema.String,
  lastName: Schema.String,
  companyName: Schema.optionalKey(Schema.String),
  siret: Schema.optionalKey(Schema.String),
  language: Language,
  /** The account's role: staff (support, admin) are shown the back-office's link; the API guards it anyway. */
  role: Schema.Literals(["customer", "support", "admin"]),
  createdAt: Schema.String
}).annotate({ identifier: "User" })

export const UserEnvelope = Schema.Struct({ user: UserView })

// --- catalog ---

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A plan's monthly price excluding VAT (as stored), and as the visitor would pay it (`GET /api/plans`). */
const PlanPrices = {
  priceCents: Count,
  priceIncludingVatCents: Count,
  /** EN 16931: `S` standard rate, `AE` reverse charge, `O` outside the scope of VAT. */
  vatCategory: Schema.Literals(["S", "AE", "O"]),
  /** 2000 = 20 %. */
  vatRateBasisPoints: Count
}

export const VpsPlanView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("vps"),
  name: Schema.String,
  ...PlanPrices,
  vcpu: Count,
  ramMiB: Count,
  diskGiB: Count,
  snapshotLimit: Count,
  /** The operating systems it can be installed with now. */
  templates: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String }))
}).annotate({ identifier: "VpsPlan" })

export const GamePlanView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("game"),
  name: Schema.String,
  ...PlanPrices,
  memoryMiB: Count,
  diskMiB: Count,
  /** 100 = one core; 0 = no limit. */
  cpuPercent: Count,
  databases: Count,
  backups: Count,
  allocations: Count,
  /** Variables the customer may set when ordering (`options.variables`). */
  userVariables: Schema.Array(Schema.String)
}).annotate({ identifier: "GamePlan" })

export const PlansEnvelope = Schema.Struct({
  /** Whom the prices are for: `business` is shown them excluding and including VAT, the others including VAT. */
  audience: Schema.Literals(["anonymous", "consumer", "business"]),
  plans: Schema.Array(Schema.Union([VpsPlanView, GamePlanView]))
})

export const PlatformView = Schema.Struct({
  /**
   * Sandbox mode: simulated Proxmox VE and Pterodactyl with demo plans, and a payment gateway that approves every
   * order without taking money. The panel shows a "demo" banner.
   */
  sandbox: Schema.Boolean
}).annotate({ identifier: "Platform" })

// --- orders, subscriptions, VPS ---

export const OrderView = Schema.Struct({
  id: Schema.String,
  planId: Schema.String,
  /** What was bought: the kind of the product that sells it ("vps", "game"). */
  kind: Schema.String,
  /** awaiting_payment → provisioning → completed | failed; expired: never paid. */
  status: Schema.Literals(["awaiting_payment", "provisioning", "completed", "failed", "expired"]),
  progress: Schema.Struct({ step: Schema.Int, total: Schema.Int, name: Schema.String }),
  /** The payment provider's hosted page where the order is paid: only while it awaits its payment. */
  checkoutUrl: Schema.optionalKey(Schema.String),
  /** When an order awaiting its payment expires unpaid. */
  expiresAt: Schema.optionalKey(Schema.String),
  failureReason: Schema.optionalKey(Schema.String),
  subscriptionId: Schema.optionalKey(Schema.String),
  serviceId: Schema.optionalKey(Schema.String),
  /** The VPS root password: on the owner's first read of the completed order, never again. */
  rootPassword: Schema.optionalKey(Schema.String),
  /** The failed order (refunded) this one completes: an operator retried it, the customer pays this one. */
  retryOf: Schema.optionalKey(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "Order" })

/** What the lists show of a subscription's service, whatever the product. */
export const ServiceSummaryView = Schema.Struct({
  name: Schema.String,
  /** Where it is reached; empty once it is gone. */
  address: Schema.String,
  /** The product's word for its state (`running`, `suspended`, `deleted` …). */
  state: Schema.String
}).annotate({ identifier: "ServiceSummary" })

export const SubscriptionView = Schema.Struct({
  id: Schema.String,
  planId: Schema.String,
  /** What was bought: the kind of the product that sells it ("vps", "game"). */
  kind: Schema.String,
  status: Schema.Literals(["active", "suspended", "terminated", "failed"]),
  currentPeriodEnd: Schema.String,
  cancelAtPeriodEnd: Schema.Boolean,
  serviceId: Schema.optionalKey(Schema.String),
  /** In the list (GET /api/subscriptions): the service as its product describes it, once built. */
  service: Schema.optionalKey(ServiceSummaryView),
  /** When its consumer withdrew from the contract (it ended then, refunded pro rata). */
  withdrawnAt: Schema.optionalKey(Schema.String),
  /**
   * In the list: until when the signed-in consumer may withdraw from this contract (POST /api/subscriptions/:id/withdraw);
   * absent when they may not (a professional account, the 14 days over, ended, or withdrawn already).
   */
  withdrawableUntil: Schema.optionalKey(Schema.String),
  /** The contract's conclusion: its first payment. */
  createdAt: Schema.String
}).annotate({ identifier: "Subscription" })

/** What a withdrawal did: the subscription, ended, and what is refunded (in cents, to the means of payment). */
export const WithdrawalView = Schema.Struct({
  subscription: SubscriptionView,
  refundCents: Schema.Int
}).annotate({ identifier: "Withdrawal" })

/** Where a subscription's renewal stands (GET /api/subscriptions/renewals); the panel puts it in words. */
export const RenewalView = Schema.Struct({
  subscriptionId: Schema.String,
  planName: Schema.String,
  kind: Schema.String,
  state: Schema.Literals(["renews", "payment_failed", "awaiting_authentication", "lapsed", "cancelled", "ended"]),
  /** What the next period costs, in cents (euros). */
  amountCents: Schema.Int,
  nextChargeAt: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.String),
  /** Declined attempts of this period so far. */
  attempts: Schema.Int,
  lastFailure: Schema.NullOr(Schema.String),
  /** The hosted page where the bank's approval is given (also reachable through POST /api/subscriptions/:id/pay). */
  payUrl: Schema.NullOr(Schema.String),
  /** When the service stops for good unless paid; for a cancelled one, its period's end. */
  endsAt: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Renewal" })

/** What paying now did: paid with the saved card, or the hosted page to pay on. */
export const PaymentAnswerView = Schema.Union([
  Schema.Struct({ outcome: Schema.Literal("paid"), subscription: SubscriptionView }),
  Schema.Struct({ outcome: Schema.Literal("pay_on_page"), url: Schema.String })
]).annotate({ identifier: "PaymentAnswer" })

export const VpsView = Schema.Struct({
  id: Schema.String,
  subscriptionId: Schema.String,
  planId: Schema.String,
  hostname: Schema.String,
  templateId: Schema.String,
  address: Schema.String,
  status: Schema.Literals(["running", "stopped", "suspended", "destroyed"]),
  graceUntil: Schema.optionalKey(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "Vps" })

export const SnapshotView = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  createdAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Snapshot" })

// --- game servers ---

export const GameServerView = Schema.Struct({
  id: Schema.String,
  subscriptionId: Schema.String,
  planId: Schema.String,
  name: Schema.String,
  /** The panel identifier: the `:id` of `/api/client/servers/:id/…`. */
  identifier: Schema.String,
  /** `host:port` players connect to. */
  address: Schema.String,
  status: Schema.Literals(["active", "suspended", "deleted"]),
  graceUntil: Schema.optionalKey(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "GameServer" })

/** The saved card (GET /api/payment-method). */
export const SavedCardView = Schema.Struct({
  brand: Schema.String,
  last4: Schema.String,
  expMonth: Schema.Int,
  expYear: Schema.Int
})

/** A charge or refund of the customer (GET /api/payments). */
export const PaymentView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["charge", "refund"]),
  amountCents: Schema.Int,
  orderId: Schema.NullOr(Schema.String),
  subscriptionId: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})

// --- invoicing ---

export const AddressView = Schema.Struct({
  line1: Schema.String,
  line2: Schema.optionalKey(Schema.String),
  postcode: Schema.String,
  city: Schema.String,
  /** ISO 3166-1 alpha-2. */
  country: Schema.String
}).annotate({ identifier: "Address" })

export const BillingProfileView = Schema.Struct({
  name: Schema.String,
  companyName: Schema.optionalKey(Schema.String),
  address: AddressView,
  vatNumber: Schema.optionalKey(Schema.String),
  /** The last VIES check of the VAT number: "unavailable" means it is checked again before the next payment. */
  vatNumberCheck: Schema.optionalKey(Schema.Struct({
    status: Schema.Literals(["valid", "invalid", "unavailable"]),
    checkedAt: Schema.String,
    requestIdentifier: Schema.optionalKey(Schema.String)
  })),
  /** False while it is only a prefill (from the account and the registry) that the customer has not saved yet. */
  saved: Schema.Boolean
}).annotate({ identifier: "BillingProfile" })

export const InvoiceLineView = Schema.Struct({
  description: Schema.String,
  quantity: Schema.Int,
  unitPriceExcludingVatCents: Schema.Int,
  /** EN 16931 VAT category: S (standard), AE (reverse charge), O (outside the scope of VAT). */
  vatCategory: Schema.String,
  vatRatePercent: Schema.Number,
  totalExcludingVatCents: Schema.Int
})

export const InvoiceView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["invoice", "credit_note"]),
  number: Schema.String,
  issuedAt: Schema.String,
  correctsInvoiceId: Schema.optionalKey(Schema.String),
  correctsNumber: Schema.optionalKey(Schema.String),
  currency: Schema.Literal("EUR"),
  periodStart: Schema.optionalKey(Schema.String),
  periodEnd: Schema.optionalKey(Schema.String),
  lines: Schema.Array(InvoiceLineView),
  vatBreakdown: Schema.Array(Schema.Struct({
    vatCategory: Schema.String,
    vatRatePercent: Schema.Number,
    baseCents: Schema.Int,
    vatCents: Schema.Int
  })),
  totalExcludingVatCents: Schema.Int,
  vatCents: Schema.Int,
  totalIncludingVatCents: Schema.Int,
  /** Legal mentions by code: "reverse_charge" (Autoliquidation), "outside_scope". */
  mentions: Schema.Array(Schema.String),
  seller: Schema.Struct({
    companyName: Schema.String,
    legalForm: Schema.String,
    shareCapitalCents: Schema.Int,
    address: AddressView,
    siren: Schema.String,
    siret: Schema.String,
    rcs: Schema.String,
    vatNumber: Schema.String
  }),
  buyer: Schema.Struct({
    name: Schema.String,
    companyName: Schema.optionalKey(Schema.String),
    address: AddressView,
    vatNumber: Schema.optionalKey(Schema.String),
    siren: Schema.optionalKey(Schema.String)
  }),
  paidAt: Schema.String
}).annotate({ identifier: "Invoice" })

// --- operators and accountability ---

/** One line of the audit log, as operators see it. */
export const AuditEventView = Schema.Struct({
  id: Schema.String,
  at: Schema.String,
  actorId: Schema.NullOr(Schema.String),
  actorRole: Schema.Literals(["customer", "support", "admin", "system", "anonymous"]),
  action: Schema.String,
  subjectUserId: Schema.NullOr(Schema.String),
  target: Schema.NullOr(Schema.Struct({ type: Schema.String, id: Schema.String })),
  address: Schema.NullOr(Schema.String),
  before: Schema.Unknown,
  after: Schema.Unknown,
  details: Schema.Unknown
}).annotate({ identifier: "AuditEvent" })

/** A page of events, newest first; `next` is the cursor of the following page (absent on the last one). */
const eventsPage = <S extends Schema.Top>(event: S) => Schema.Struct({ events: Schema.Array(event), next: Schema.optionalKey(Schema.String) })

/** A page of the log. */
export const AuditPage = eventsPage(AuditEventView)

/** A security event of the customer's own account, as the panel shows it. */
export const SecurityEventView = Schema.Struct({
  id: Schema.String,
  at: Schema.String,
  action: Schema.String,
  /** Who acted: the customer themselves, an operator, the platform, or nobody signed in (a failed sign-in). */
  by: Schema.Literals(["you", "operator", "platform", "anonymous"]),
  address: Schema.NullOr(Schema.String),
  details: Schema.Unknown
}).annotate({ identifier: "SecurityEvent" })

export const SecurityEventsPage = eventsPage(SecurityEventView)

/** A customer in the back-office: the account and its role. */
export const StaffCustomerView = Schema.Struct(UserView.fields).annotate({ identifier: "StaffCustomer" })

export const SessionView = Schema.Struct({
  id: Schema.String,
  createdAt: Schema.String,
  lastSeenAt: Schema.String,
  expiresAt: Schema.String,
  rememberMe: Schema.Boolean,
  userAgent: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Session" })

/** A customer's page in the back-office. */
export const StaffOrderView = Schema.Struct({
  ...OrderView.fields,
  userId: Schema.String,
  updatedAt: Schema.String,
  /** The order this failed one was retried as (at most one). */
  retriedAs: Schema.optionalKey(Schema.String)
})

/** A page of a customer's orders, newest first, each with when it was paid; `next`: the cursor of the following page. */
export const StaffOrderPage = Schema.Struct({
  orders: Schema.Array(Schema.Struct({ ...StaffOrderView.fields, paidAt: Schema.optionalKey(Schema.String) })),
  next: Schema.optionalKey(Schema.String)
})

export const StaffCustomerPage = Schema.Struct({
  customer: StaffCustomerView,
  /** As the customer saved it; null before their first save. */
  billingProfile: Schema.NullOr(BillingProfileView),
  /** Their latest invoices and credit notes; `next`: GET /api/admin/customers/:id/invoices?after=… for older ones. */
  invoices: Schema.Struct({ invoices: Schema.Array(InvoiceView), next: Schema.optionalKey(Schema.String) }),
  /** Their latest orders; `next`: GET /api/admin/customers/:id/orders?after=… for older ones. */
  orders: StaffOrderPage,
  sessions: Schema.Array(SessionView),
  subscriptions: Schema.Array(SubscriptionView),
  audit: AuditPage
})

// --- the back-office's catalog ---

/** A plan as the catalog file made it, whether it is retired and whether an operator has it on sale. */
export const AdminPlanView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["vps", "game"]),
  name: Schema.String,
  priceCents: Count,
  retired: Schema.Boolean,
  onSale: Schema.Boolean,
  /** VPS plans: the machine and the templates it may be installed with. */
  vcpu: Schema.optionalKey(Count),
  ramMiB: Schema.optionalKey(Count),
  diskGiB: Schema.optionalKey(Count),
  templates: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Game plans: the panel and the limits. */
  panel: Schema.optionalKey(Schema.String),
  memoryMiB: Schema.optionalKey(Count),
  diskMiB: Schema.optionalKey(Count),
  cpuPercent: Schema.optionalKey(Count)
}).annotate({ identifier: "AdminPlan" })

export const AdminCatalogView = Schema.Struct({
  plans: Schema.Array(AdminPlanView),
  templates: Schema.Array(Schema.Struct({
    id: Schema.String, name: Schema.String, cluster: Schema.String, node: Schema.String, vmid: Count, retired: Schema.Boolean
  })),
  pools: Schema.Array(Schema.Struct({
    id: Schema.String,
    cluster: Schema.String,
    cidr: Schema.String,
    gateway: Schema.String,
    bridge: Schema.String,
    nodes: Schema.Array(Schema.String),
    retired: Schema.Boolean,
    free: Count,
    assigned: Count
  })),
  /** The upstreams by name and address; their credentials never leave the server. */
  clusters: Schema.Array(Schema.Struct({ name: Schema.String, url: Schema.String, retired: Schema.Boolean })),
  panels: Schema.Array(Schema.Struct({ name: Schema.String, url: Schema.String, retired: Schema.Boolean }))
}).annotate({ identifier: "AdminCatalog" })

export const PlanSaleView = Schema.Struct({ id: Schema.String, onSale: Schema.Boolean }).annotate({ identifier: "PlanSale" })

// --- the back-office's dashboard ---

const Resources = Schema.Struct({ vcpus: Count, memoryMiB: Count, diskGiB: Count })

/** Each figure with `alert`: past its threshold (the page shows it red). Amounts in cents. */
export const DashboardView = Schema.Struct({
  /** The French calendar day "today" means. */
  day: Schema.Struct({ start: Schema.String, end: Schema.String }),
  mrr: Schema.Struct({
    activeSubscriptions: Count,
    excludingVatCents: Count,
    invoicedSubscriptions: Count,
    lastInvoicedIncludingVatCents: Count
  }),
  services: Schema.Array(Schema.Struct({
    kind: Schema.String, planId: Schema.String, planName: Schema.NullOr(Schema.String), active: Count, suspended: Count
  })),
  orders: Schema.Struct({ placed: Count, failed: Count, alert: Schema.Boolean }),
  failedPayments: Schema.Struct({ retrying: Count, awaitingAuthentication: Count, amountCents: Count, alert: Schema.Boolean }),
  /** Operators' refunds the gateway has not confirmed yet, and failed orders whose refund and clean-up are pending. */
  openRefunds: Schema.Struct({ requests: Count, requestedCents: Count, orders: Count, oldestSince: Schema.NullOr(Schema.String), alert: Schema.Boolean }),
  pools: Schema.Array(Schema.Struct({ id: Schema.String, cluster: Schema.String, free: Count, assigned: Count, alert: Schema.Boolean })),
  /** `free` is null when the panel did not answer. */
  allocations: Schema.Array(Schema.Struct({ panel: Schema.String, held: Count, free: Schema.NullOr(Count), alert: Schema.Boolean })),
  /** `available` (and `online`) null when the node's cluster did not answer. */
  nodes: Schema.Array(Schema.Struct({
    cluster: Schema.String,
    node: Schema.String,
    online: Schema.NullOr(Schema.Boolean),
    committed: Resources,
    available: Schema.NullOr(Resources),
    alert: Schema.Boolean
  })),
  thresholds: Schema.Struct({
    poolFreeMinPercent: Count,
    allocationsFreeMinPercent: Count,
    nodeCommitMaxPercent: Count,
    failedOrdersMax: Count,
    failedPaymentsMax: Count,
    openRefundsMax: Count
  })
}).annotate({ identifier: "AdminDashboard" })

// --- "view as customer" ---

/** What the customer's panel shows them, for an operator (read-only: no pay link, no action). */
export const ViewAsView = Schema.Struct({
  customer: StaffCustomerView,
  subscriptions: Schema.Array(SubscriptionView),
  renewals: Schema.Array(RenewalView),
  vps: Schema.Array(VpsView),
  gameServers: Schema.Array(GameServerView),
  invoices: Schema.Array(InvoiceView)
}).annotate({ identifier: "AdminViewAs" })

// --- back-office operations (AdminOperationsApi.ts) ---

export const ServiceHoldView = Schema.Struct({
  id: Schema.String,
  facts: Schema.String,
  /** One of the grounds of domain/billing/ServiceHold.ts. */
  ground: Schema.Literals(["terms_of_service", "illegal_content", "abuse", "security", "fraud"]),
  placedBy: Schema.String,
  placedAt: Schema.String,
  liftedBy: Schema.NullOr(Schema.String),
  liftedAt: Schema.NullOr(Schema.String),
  liftReason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ServiceHold" })


/** The upstream's live state of a service (its product asked it now); `reachable: false` when it did not answer. */
export const UpstreamView = Schema.Union([
  Schema.Struct({
    reachable: Schema.Literal(true),
    upstream: Schema.String,
    state: Schema.String,
    ownership: Schema.Literals(["ours", "gone", "foreign"]),
    facts: Schema.Array(Schema.Struct({ label: Schema.String, value: Schema.String }))
  }),
  Schema.Struct({ reachable: Schema.Literal(false), upstream: Schema.String, detail: Schema.String })
]).annotate({ identifier: "UpstreamState" })

/** The provisioning as its order recorded it, step by step. */
export const ProvisioningView = Schema.Struct({
  order: StaffOrderView,
  steps: Schema.Array(Schema.Struct({ name: Schema.String, state: Schema.Literals(["done", "current", "failed", "pending"]) }))
})

export const FindingsView = Schema.Struct({
  at: Schema.String,
  findings: Schema.Array(Schema.Struct({
    problem: Schema.Literals(["missing", "not ours", "unreachable", "cleanup pending"]),
    detail: Schema.String
  }))
}).annotate({ identifier: "ServiceFindings" })

/** A service as an operator reads it: our records, the upstream's live state beside them, its provisioning, its holds. */
export const StaffServicePage = Schema.Struct({
  subscription: SubscriptionView,
  customerId: Schema.String,
  /** The product's summary of the service; null before it is built. */
  service: Schema.NullOr(ServiceSummaryView),
  /** What the upstream holds now; null when there is nothing to ask about (not built). */
  upstream: Schema.NullOr(UpstreamView),
  provisioning: Schema.NullOr(ProvisioningView),
  /** The operator's hold in force, if any. */
  hold: Schema.NullOr(ServiceHoldView),
  /** Every hold, newest first. */
  holds: Schema.Array(ServiceHoldView)
}).annotate({ identifier: "StaffServicePage" })

export const RefundView = Schema.Struct({
  requestId: Schema.String,
  amountCents: Schema.Int,
  /** What is left to refund of the charge afterwards. */
  refundableCents: Schema.Int,
  /** The credit note issued for it (none when the charge had no invoice). */
  creditNote: Schema.NullOr(Schema.Struct({ id: Schema.String, number: Schema.String }))
}).annotate({ identifier: "Refund" })

export const StaffPaymentView = Schema.Struct({
  ...PaymentView.fields,
  /** For a charge: what is left to refund of it. */
  refundableCents: Schema.optionalKey(Schema.Int)
})


export const NoticeView = Schema.Struct({
  key: Schema.String,
  tag: Schema.String,
  createdAt: Schema.String,
  sentAt: Schema.NullOr(Schema.String),
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String)
}).annotate({ identifier: "CustomerNoticeRecord" })
