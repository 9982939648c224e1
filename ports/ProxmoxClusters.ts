// Where each Proxmox cluster of the catalog is and how to sign in to it (credentials opened from SecretBox).
import { Context, type Effect, type Redacted } from "effect"
import type { ClusterUnknown } from "./Virtualization.ts"

export type ProxmoxAuth =
  | { readonly kind: "password"; readonly username: string; readonly password: Redacted.Redacted<string> }
  | {
    readonly kind: "token"
    /** `user@realm!tokenid` */
    readonly tokenId: string
    readonly secret: Redacted.Redacted<string>
    /** A user login for the serial console, which API tokens cannot open on most PVE releases. */
    readonly consoleLogin: { readonly username: string; readonly password: Redacted.Redacted<string> } | null
  }

export interface ProxmoxTls {
  /** PEM of the CA that signed the cluster's certificate. */
  readonly ca: string | null
  /** SHA-256 fingerprint of the cluster's certificate (`AB:CD:…`), pinned instead of a CA. */
  readonly fingerprint: string | null
  /** Accept any certificate (self-signed labs only; must be said explicitly). */
  readonly insecure: boolean
}

export interface ProxmoxCluster {
  readonly name: string
  /** `https://pve.example:8006` (no path). */
  readonly url: string
  readonly auth: ProxmoxAuth
  readonly tls: ProxmoxTls
}

export class ProxmoxClusters extends Context.Service<ProxmoxClusters, {
  get(name: string): Effect.Effect<ProxmoxCluster, ClusterUnknown>
}>()("zh/ports/ProxmoxClusters") {}
