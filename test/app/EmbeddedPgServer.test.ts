// The embedded database's wire-protocol server at its close, on a real in-memory PGlite and raw protocol messages:
// once the owner closes it, nothing more reaches PGlite (a message run on a PGlite being closed spins or hangs it,
// electric-sql/pglite#1058), and a client still connected does not hold the close.
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { EmbeddedPgServer } from "../../app/EmbeddedPgServer.ts"
import { pgliteTemplate } from "../support/databases.ts"

const cstring = (text: string) => Buffer.concat([Buffer.from(text, "utf8"), Buffer.from([0])])

const startupMessage = () => {
  const body = Buffer.concat([Buffer.from([0, 3, 0, 0]), cstring("user"), cstring("postgres"), cstring("database"), cstring("postgres"), Buffer.from([0])])
  const length = Buffer.alloc(4)
  length.writeInt32BE(body.length + 4)
  return Buffer.concat([length, body])
}

/** A simple-protocol Query message. */
const query = (sql: string) => {
  const body = cstring(sql)
  const head = Buffer.alloc(5)
  head.write("Q")
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

/** A raw client: `send` writes a message and resolves at the server's next ReadyForQuery. */
const client = async (path: string) => {
  const socket: Socket = connect(path)
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  socket.on("error", () => undefined)
  let received = Buffer.alloc(0)
  let waiting: (() => void) | undefined
  socket.on("data", (data: Buffer) => {
    received = Buffer.concat([received, data])
    // ReadyForQuery: 'Z', length 5, status byte.
    if (received.length >= 6 && received[received.length - 6] === 0x5a) waiting?.()
  })
  const send = (message: Buffer) =>
    new Promise<void>((resolve) => {
      received = Buffer.alloc(0)
      waiting = resolve
      socket.write(message)
    })
  await send(startupMessage())
  return { socket, send, last: () => received }
}

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A PGlite behind the server, counting the protocol messages it executes once `closing` is set. */
const serving = async () => {
  const db = await PGlite.create("memory://", { loadDataDir: await Effect.runPromise(pgliteTemplate) })
  cleanups.push(() => (db.closed ? Promise.resolve() : db.close()))
  const seen = { closing: false, afterClose: 0 }
  const execute = db.execProtocolRawStream.bind(db)
  db.execProtocolRawStream = (message, options) => {
    if (seen.closing) seen.afterClose++
    return execute(message, options)
  }
  const dir = await mkdtemp(join(tmpdir(), "zh-pgserver-"))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const server = new EmbeddedPgServer(db)
  const path = join(dir, "pg.sock")
  await server.listen(path)
  return { db, server, path, seen }
}

/**
 * Two clients: `holder` inside a transaction that created `table`, and `waiter` with an insert into it queued behind
 * that transaction (it may only run once the holder's session is released).
 */
const queuedBehindTransaction = async (path: string, table: string) => {
  const holder = await client(path)
  const waiter = await client(path)
  await holder.send(query(`BEGIN; CREATE TABLE ${table} (x int)`))
  waiter.socket.write(query(`INSERT INTO ${table} VALUES (1)`))
  await new Promise((resolve) => setTimeout(resolve, 50))
  return { holder, waiter }
}

/** Closes the server: "closed" once it has, or "still waiting" after `ms`. */
const closeWithin = (server: EmbeddedPgServer, ms: number) =>
  Promise.race([
    server.close().then(() => "closed"),
    new Promise((resolve) => setTimeout(() => resolve("still waiting"), ms))
  ])

describe("a connection that vanishes", () => {
  it("mid-transaction is rolled back, and the next connection gets the session", async () => {
    const { path } = await serving()
    const first = await client(path)
    await first.send(query("CREATE TABLE kept (x int)"))
    await first.send(query("BEGIN; INSERT INTO kept VALUES (1)"))
    first.socket.destroy()
    const next = await client(path)
    await next.send(query("SELECT count(*) FROM kept"))
    expect(next.last().toString("latin1")).toContain("SELECT 1")
    // One row counted, and it says 0: the insert was rolled back.
    expect(next.last().toString("latin1")).toMatch(/D\0\0\0\x0b\0\x01\0\0\0\x010/)
  })
})

describe("a connection that vanishes while it waits for the session", () => {
  it("runs nothing, lets the next connection in, and does not hold the server's close", async () => {
    const { server, path } = await serving()
    const { holder, waiter } = await queuedBehindTransaction(path, "w")
    // Given up (as @effect/sql-pg closes a connection whose interrupted statement does not answer), and the server
    // sees it gone before the transaction ends.
    waiter.socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await holder.send(query("COMMIT"))
    const next = await client(path)
    await next.send(query("SELECT count(*) FROM w"))
    // One row counted, and it says 0: the vanished connection's insert never ran.
    expect(next.last().toString("latin1")).toMatch(/D\0\0\0\x0b\0\x01\0\0\0\x010/)
    expect(await closeWithin(server, 2_000)).toBe("closed")
  })
})

describe("closing the embedded database server", () => {
  it("runs nothing more on PGlite once closed: a batch queued behind another connection's transaction is dropped", async () => {
    const { db, server, path, seen } = await serving()
    const { holder, waiter } = await queuedBehindTransaction(path, "t")
    waiter.socket.destroy()
    holder.socket.destroy()
    await server.close()
    seen.closing = true
    await db.close()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(seen.afterClose).toBe(0)
  })

  it("does not wait for a client that stays connected", async () => {
    const { server, path } = await serving()
    const idle = await client(path)
    await idle.send(query("SELECT 1"))
    expect(await closeWithin(server, 2_000)).toBe("closed")
    expect(await new Promise((resolve) => (idle.socket.destroyed ? resolve(true) : idle.socket.once("close", () => resolve(true))))).toBe(true)
  })
})
