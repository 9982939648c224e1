// A TCP proxy a test controls, between the application and its database: open (bytes flow), or cut — every open
// connection dropped, and new ones either refused at once or accepted and never answered (a dead network, where
// only a timeout ends the wait).
import { connect, createServer, type Socket } from "node:net"

export type Cut = "refuse" | "blackhole"

export interface TcpProxy {
  readonly port: number
  /** Drops every connection; from now on new ones are refused or left hanging. */
  cut(how: Cut): void
  /** Lets new connections through again (the dropped ones stay dropped). */
  restore(): void
  close(): Promise<void>
}

export const startTcpProxy = (target: { readonly host: string; readonly port: number } | { readonly path: string }) =>
  new Promise<TcpProxy>((resolve, reject) => {
    let cut: Cut | undefined
    const sockets = new Set<Socket>()
    const track = (socket: Socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
    }
    const server = createServer((client) => {
      track(client)
      if (cut === "refuse") return void client.destroy()
      if (cut === "blackhole") return
      const upstream = connect(target)
      track(upstream)
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        port,
        cut: (how) => {
          cut = how
          for (const socket of sockets) socket.destroy()
        },
        restore: () => {
          cut = undefined
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
