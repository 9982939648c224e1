// How the adapter reaches the nodes (Wings) behind a panel: by default over the network (undici's global dispatcher
// for downloads, a TCP connection per console WebSocket); the in-memory simulation provides its own, so the real
// adapter runs against it without a socket.
import { Context } from "effect"
import type { Duplex } from "node:stream"
import type { Dispatcher } from "undici"

export interface NodeConnections {
  /** Carries node downloads; undefined: undici's global dispatcher. */
  readonly dispatcher: Dispatcher | undefined
  /** The byte stream under a console WebSocket; undefined: a TCP connection to the node. */
  readonly webSocket: (() => Duplex) | undefined
}

export const NodeConnections = Context.Reference<NodeConnections>("adapters/pterodactyl/NodeConnections", {
  defaultValue: () => ({ dispatcher: undefined, webSocket: undefined })
})
