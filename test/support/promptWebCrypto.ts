// WebCrypto for domain tests on TestClock: SHA digests (workflow execution ids and activity keys) answered at once
// from node:crypto, instead of on the thread pool. A test that moves the clock in a loop then never outruns a
// workflow that is only waiting for its id; everything else is the platform's own WebCrypto.
import { WebCrypto } from "effect/crypto"
import { createHash } from "node:crypto"

const nodeName = (algorithm: AlgorithmIdentifier) =>
  (typeof algorithm === "string" ? algorithm : algorithm.name).toLowerCase().replace("-", "")

const bytesOf = (data: BufferSource) =>
  ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data)

const digest = (algorithm: AlgorithmIdentifier, data: BufferSource): Promise<ArrayBuffer> => {
  const hash = createHash(nodeName(algorithm)).update(bytesOf(data)).digest()
  return Promise.resolve(new Uint8Array(hash).buffer)
}

/** Methods of the platform's objects keep their own `this`. */
const bound = <T extends object>(target: T, property: string | symbol) => {
  const value: unknown = Reflect.get(target, property, target)
  return typeof value === "function" ? value.bind(target) : value
}

const subtle = new Proxy(globalThis.crypto.subtle, {
  get: (target, property) => property === "digest" ? digest : bound(target, property)
})

const crypto = new Proxy(globalThis.crypto, {
  get: (target, property) => property === "subtle" ? subtle : bound(target, property)
})

export const promptWebCrypto = WebCrypto.layer(crypto)
