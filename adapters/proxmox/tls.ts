// How a cluster's certificate is trusted: a CA PEM, a pinned SHA-256 fingerprint, or (said explicitly) nothing at all.
// One pair of agents per cluster serves both the HTTP client and the console's WebSocket: both trust the same server.
import * as Http from "node:http"
import * as Https from "node:https"
import { isIP } from "node:net"
import type { Duplex } from "node:stream"
import * as Tls from "node:tls"
import type { ProxmoxTls } from "../../ports/ProxmoxClusters.ts"

/** `AB:CD:…`, `abcd…`: compared without separators and case. */
export const normalizeFingerprint = (fingerprint: string) => fingerprint.replace(/[^0-9a-f]/gi, "").toUpperCase()

const connectionOf = (options: Http.ClientRequestArgs): Tls.ConnectionOptions => {
  const host = options.host ?? options.hostname ?? "localhost"
  return {
    host,
    port: Number(options.port ?? 443),
    // SNI takes host names only (RFC 6066 §3).
    ...(isIP(host) === 0 ? { servername: host } : {}),
    rejectUnauthorized: false
  }
}

/**
 * A pin replaces chain verification: the handshake accepts any chain, and the socket is handed to the request only
 * after the peer certificate's fingerprint matched, so nothing (no cookie, no token) is ever written to another
 * server. Node calls `checkServerIdentity` only after the chain verified, which a self-signed certificate never does,
 * hence a check of our own.
 */
class PinnedAgent extends Https.Agent {
  readonly #expected: string
  constructor(options: Https.AgentOptions, fingerprint: string) {
    super(options)
    this.#expected = normalizeFingerprint(fingerprint)
  }
  override createConnection(
    options: Http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void
  ): Duplex | null | undefined {
    const socket = Tls.connect(connectionOf(options))
    const done = callback ?? (() => undefined)
    const onError = (error: Error) => done(error, socket)
    socket.once("error", onError)
    socket.once("secureConnect", () => {
      socket.removeListener("error", onError)
      const actual = normalizeFingerprint(socket.getPeerCertificate().fingerprint256 ?? "")
      if (actual === this.#expected) return done(null, socket)
      const error = new Error("the server certificate does not match the pinned SHA-256 fingerprint")
      socket.destroy()
      done(error, socket)
    })
    // Returning nothing makes node:http's Agent wait for the callback (Agent#createSocket).
    return undefined
  }
}

export interface Agents {
  readonly http: Http.Agent
  readonly https: Https.Agent
}

/** A pin wins over a CA, and both over `insecure`; with none of them the system CAs apply. */
export const makeAgents = (tls: ProxmoxTls): Agents => {
  const base: Https.AgentOptions = { keepAlive: true, maxSockets: 16 }
  if (tls.fingerprint !== null) return { http: new Http.Agent(base), https: new PinnedAgent(base, tls.fingerprint) }
  const trust: Https.AgentOptions = tls.ca !== null ? { ca: tls.ca } : tls.insecure ? { rejectUnauthorized: false } : {}
  return { http: new Http.Agent(base), https: new Https.Agent({ ...base, ...trust }) }
}

export const destroyAgents = (agents: Agents) => {
  agents.http.destroy()
  agents.https.destroy()
}
