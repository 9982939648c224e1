// WebSocket handshakes and frames written by hand, for what a well-behaved client never sends: upgrades that are not
// WebSocket or are malformed (answered as plain HTTP), and a frame header announcing a payload that never follows.
import { connect, type Socket } from "node:net"
import { randomBytes } from "node:crypto"

export interface PlainAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: string
}

/** The first answer in `bytes` (its status line, headers and Content-Length body), or undefined while incomplete. */
const answerIn = (bytes: Buffer): PlainAnswer | undefined => {
  const end = bytes.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const [status = "", ...fields] = bytes.subarray(0, end).toString("latin1").split("\r\n")
  const parsed: Record<string, string> = {}
  for (const field of fields) {
    const colon = field.indexOf(":")
    parsed[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim()
  }
  const code = Number(status.split(" ")[1])
  const length = code === 101 ? 0 : Number(parsed["content-length"] ?? "0")
  if (bytes.length < end + 4 + length) return undefined
  return { status: code, headers: parsed, body: bytes.subarray(end + 4, end + 4 + length).toString("utf8") }
}

const writeGet = (socket: Socket, url: URL, path: string, headers: Record<string, string>) => {
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  socket.write(`${lines.join("\r\n")}\r\n\r\n`)
}

/**
 * A GET with these headers written on a raw connection and read as plain HTTP (Node's client gives up on some answers
 * to an `Upgrade` request); an accepted upgrade (101) fails the promise.
 */
export const plainAnswer = (baseUrl: string, path: string, headers: Record<string, string>) =>
  new Promise<PlainAnswer>((resolve, reject) => {
    const url = new URL(baseUrl)
    const socket = connect(Number(url.port), url.hostname)
    let buffer = Buffer.alloc(0)
    const settle = () => {
      const answer = answerIn(buffer)
      if (answer === undefined) return false
      socket.destroy()
      if (answer.status === 101) reject(new Error(`${path} was upgraded for ${JSON.stringify(headers)}`))
      else resolve(answer)
      return true
    }
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      settle()
    })
    socket.once("error", reject)
    socket.once("close", () => {
      if (!settle()) reject(new Error(`no complete answer for ${path}: ${JSON.stringify(buffer.toString("latin1"))}`))
    })
    writeGet(socket, url, path, headers)
  })

/**
 * Like `plainAnswer`, read until the server closes the connection: its one answer, and the bytes after it (none, from
 * a server that keeps its word). Fails when the connection is still open after `timeoutMs`.
 */
export const lastAnswer = (baseUrl: string, path: string, headers: Record<string, string>, timeoutMs = 5_000) =>
  new Promise<PlainAnswer & { readonly after: number }>((resolve, reject) => {
    const url = new URL(baseUrl)
    const socket = connect(Number(url.port), url.hostname)
    let buffer = Buffer.alloc(0)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`${path}: the connection was still open ${timeoutMs} ms after ${JSON.stringify(buffer.toString("latin1"))}`))
    }, timeoutMs)
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
    })
    socket.once("error", reject)
    socket.once("close", () => {
      clearTimeout(timer)
      const answer = answerIn(buffer)
      if (answer === undefined) reject(new Error(`no complete answer for ${path}: ${JSON.stringify(buffer.toString("latin1"))}`))
      else resolve({ ...answer, after: buffer.length - buffer.indexOf("\r\n\r\n") - 4 - Buffer.byteLength(answer.body) })
    })
    writeGet(socket, url, path, headers)
  })

/** The headers of a valid WebSocket handshake (version 13, a fresh key). */
export const handshakeHeaders = (): Record<string, string> => ({
  connection: "Upgrade",
  upgrade: "websocket",
  "sec-websocket-version": "13",
  "sec-websocket-key": randomBytes(16).toString("base64")
})

/** A raw TCP connection upgraded to a WebSocket (the 101 read), and everything the server sends after it. */
export const rawWebSocket = (baseUrl: string, path: string, headers: Record<string, string>) =>
  new Promise<{ readonly socket: Socket; readonly received: () => Buffer; readonly ended: Promise<void> }>((resolve, reject) => {
    const url = new URL(baseUrl)
    const socket = connect(Number(url.port), url.hostname)
    let buffer = Buffer.alloc(0)
    let upgraded = false
    const ended = new Promise<void>((done) => socket.once("close", () => done()))
    socket.once("error", reject)
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      if (upgraded) return
      const end = buffer.indexOf("\r\n\r\n")
      if (end < 0) return
      const head = buffer.subarray(0, end).toString("latin1")
      if (!head.startsWith("HTTP/1.1 101")) {
        reject(new Error(`not upgraded: ${head}`))
        socket.destroy()
        return
      }
      upgraded = true
      buffer = buffer.subarray(end + 4)
      resolve({ socket, received: () => buffer, ended })
    })
    writeGet(socket, url, path, headers)
  })

/** A client frame's header (masked, as clients must) announcing `length` payload bytes; the payload is not written. */
export const frameHeaderOnly = (opcode: number, length: number) => {
  const head = Buffer.alloc(14)
  head[0] = 0x80 | opcode
  head[1] = 0x80 | 127
  head.writeBigUInt64BE(BigInt(length), 2)
  randomBytes(4).copy(head, 10)
  return head
}

/** The code of the first close frame (opcode 8) in what the server sent, if any. */
export const closeCodeIn = (bytes: Buffer): number | undefined => {
  let at = 0
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at]! & 0x0f
    let length = bytes[at + 1]! & 0x7f
    let offset = at + 2
    if (length === 126) {
      length = bytes.readUInt16BE(offset)
      offset += 2
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(offset))
      offset += 8
    }
    if (opcode === 8) return length >= 2 ? bytes.readUInt16BE(offset) : 1005
    at = offset + length
  }
  return undefined
}
