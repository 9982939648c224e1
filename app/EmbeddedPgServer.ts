// Serves one PGlite database over the Postgres wire protocol to several connections, safely.
//
// PGlite is a single backend session. pglite-socket shares it by running client messages one at a time, which
// interleaves two clients' extended-protocol sequences (Parse/Bind/Execute…Sync) and breaks both ("portal does
// not exist"); it also lets another client slip in before a BEGIN has taken effect. Here a client's messages
// run as whole batches up to Sync (or a simple Query), and a client inside a transaction keeps the session until
// the transaction ends. Connections then behave like separate sessions as long as no one waits, inside a
// transaction, for another connection — which our code never does. Once closing, nothing more reaches PGlite: a
// message run on a PGlite being closed can spin or hang it (electric-sql/pglite#1058), so `close` drops the
// connections, lets the message under way finish, and only then may the owner close the database.
import type { PGlite } from "@electric-sql/pglite"
import { createServer, type Server, type Socket } from "node:net"

const SSL_REQUEST = 80877103
const CANCEL_REQUEST = 80877102
/** Message types after which the client waits for answers: the end of a batch. */
const BATCH_ENDS = new Set(["S", "Q", "X", "H", "F"])

/** A FIFO lock on the one backend session; the holder may keep it across batches while in a transaction. */
class SessionLock {
  private holder: number | null = null
  private readonly waiting: Array<{ readonly id: number; readonly wake: () => void }> = []

  async acquire(id: number): Promise<void> {
    if (this.holder === id) return
    if (this.holder === null && this.waiting.length === 0) {
      this.holder = id
      return
    }
    await new Promise<void>((wake) => this.waiting.push({ id, wake }))
  }

  release(id: number) {
    if (this.holder !== id) return
    const next = this.waiting.shift()
    this.holder = next?.id ?? null
    next?.wake()
  }

  /**
   * A connection gone while it waited: its waiter is let go without the session (it then sees the connection gone and
   * runs nothing). Merely dropped, it would never settle, nor would that connection's queue of work, which `close`
   * waits for: the stop of the process would hang once a client gave up on a statement queued behind a transaction
   * (@effect/sql-pg closes a connection whose interrupted statement does not answer within 5 s).
   */
  forget(id: number) {
    const index = this.waiting.findIndex((w) => w.id === id)
    if (index >= 0) this.waiting.splice(index, 1)[0]!.wake()
  }

  /** At close: lets every waiter through (each then sees the server closing and runs nothing). */
  abandon() {
    this.holder = null
    for (const waiter of this.waiting.splice(0)) waiter.wake()
  }
}

export class EmbeddedPgServer {
  private readonly server: Server
  private readonly lock = new SessionLock()
  private nextId = 1
  private readonly db: PGlite
  private closing = false
  private readonly sockets = new Set<Socket>()
  /** Each open connection's queue of work, to wait for at close. */
  private readonly work = new Map<number, Promise<void>>()

  constructor(db: PGlite) {
    this.db = db
    this.server = createServer((socket) => this.serve(socket))
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject)
      this.server.listen(path, () => {
        this.server.off("error", reject)
        resolve()
      })
    })
  }

  /** Refuses new connections, drops the open ones, and resolves once no message runs on the database any more. */
  async close(): Promise<void> {
    this.closing = true
    this.lock.abandon()
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    await stopped
    await Promise.all(this.work.values())
  }

  private serve(socket: Socket) {
    const id = this.nextId++
    let buffer = Buffer.alloc(0)
    let started = false
    let batch: Array<Uint8Array> = []
    let chain = Promise.resolve()
    let closed = false
    this.sockets.add(socket)
    const gone = () => closed || this.closing

    const enqueue = (task: () => Promise<void>) => {
      chain = chain.then(task).catch(() => {
        socket.destroy()
      })
      const queued = chain
      this.work.set(id, queued)
      void queued.then(() => {
        if (this.work.get(id) === queued) this.work.delete(id)
      })
    }

    const run = (messages: Array<Uint8Array>) =>
      enqueue(async () => {
        if (gone()) return
        await this.lock.acquire(id)
        try {
          // The connection may have gone while it waited for the session, or between two messages.
          for (const message of messages) {
            if (gone()) return
            await this.db.runExclusive(() =>
              this.db.execProtocolRawStream(message, {
                onRawData: (chunk: Uint8Array) => {
                  if (!socket.destroyed) socket.write(chunk)
                }
              })
            )
          }
        } finally {
          if (this.closing || !this.db.isInTransaction()) this.lock.release(id)
        }
      })

    socket.on("data", (data: Buffer) => {
      buffer = Buffer.concat([buffer, data])
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return
          const length = buffer.readInt32BE(0)
          const code = buffer.readInt32BE(4)
          if (code === SSL_REQUEST) {
            buffer = buffer.subarray(8)
            socket.write("N")
            continue
          }
          if (code === CANCEL_REQUEST) {
            socket.destroy()
            return
          }
          if (buffer.length < length) return
          run([new Uint8Array(buffer.subarray(0, length))])
          buffer = buffer.subarray(length)
          started = true
          continue
        }
        if (buffer.length < 5) return
        const type = String.fromCharCode(buffer[0]!)
        const length = 1 + buffer.readInt32BE(1)
        if (buffer.length < length) return
        batch.push(new Uint8Array(buffer.subarray(0, length)))
        buffer = buffer.subarray(length)
        if (BATCH_ENDS.has(type)) {
          const messages = batch
          batch = []
          run(messages)
        }
      }
    })

    const end = () => {
      if (closed) return
      closed = true
      this.sockets.delete(socket)
      this.lock.forget(id)
      // A connection that vanished mid-transaction must not keep the session: roll it back, then let others in
      // (unless the database is closing, which ends every transaction).
      enqueue(async () => {
        if (this.closing) return
        await this.lock.acquire(id)
        try {
          if (!this.closing && this.db.isInTransaction()) await this.db.exec("ROLLBACK")
        } finally {
          this.lock.release(id)
        }
      })
    }
    socket.on("close", end)
    socket.on("error", end)
  }
}
