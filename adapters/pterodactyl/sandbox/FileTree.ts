// One server's files, in memory: a flat map of normalized absolute paths. A file holds its bytes, or only a size for a
// SYNTHETIC file whose deterministic content is generated while streaming (a 100 MiB download never sits in memory).
import { Data, Stream } from "effect"

export type FileData = Buffer | { readonly syntheticBytes: number }

export interface FileEntry {
  readonly kind: "file"
  readonly data: FileData
  readonly mode: number
  readonly modifiedAt: number
  readonly createdAt: number
  /** Entries packed by `compress`, so `decompress` can unpack them. */
  readonly archive?: ReadonlyMap<string, Entry>
}

export interface DirEntry {
  readonly kind: "dir"
  readonly mode: number
  readonly modifiedAt: number
  readonly createdAt: number
}

export type Entry = FileEntry | DirEntry

/** Byte `i` of every synthetic file. */
export const syntheticByte = (i: number): number => i % 251

export const sizeOf = (data: FileData): number => (Buffer.isBuffer(data) ? data.length : data.syntheticBytes)

/** `/a/b` for `a/b/`, `//a/./b`, `/x/../a/b`; never escapes the root. */
export const normalizePath = (path: string): string => {
  const out: Array<string> = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") out.pop()
    else out.push(part)
  }
  return `/${out.join("/")}`
}

export const joinPath = (root: string, name: string): string => normalizePath(`${root}/${name}`)

export const parentOf = (path: string): string => normalizePath(path.split("/").slice(0, -1).join("/"))

export const baseName = (path: string): string => path.split("/").filter((s) => s !== "").pop() ?? ""

export class FileTree {
  /** The simulation's clock (stamps entries). */
  private readonly now: () => number
  entries: Map<string, Entry>

  constructor(now: () => number) {
    this.now = now
    const at = now()
    this.entries = new Map<string, Entry>([["/", { kind: "dir", mode: 0o755, modifiedAt: at, createdAt: at }]])
  }

  get(path: string): Entry | undefined {
    return this.entries.get(normalizePath(path))
  }

  private ensureDir(path: string) {
    const p = normalizePath(path)
    if (this.entries.get(p)?.kind === "dir") return
    if (p !== "/") this.ensureDir(parentOf(p))
    const now = this.now()
    this.entries.set(p, { kind: "dir", mode: 0o755, modifiedAt: now, createdAt: now })
  }

  mkdir(path: string): void {
    this.ensureDir(path)
  }

  write(path: string, data: FileData, mode = 0o644): void {
    const p = normalizePath(path)
    this.ensureDir(parentOf(p))
    const now = this.now()
    const old = this.entries.get(p)
    this.entries.set(p, { kind: "file", data, mode, modifiedAt: now, createdAt: old?.createdAt ?? now })
  }

  /** Direct children of a directory, or undefined when it is not one. */
  list(dir: string): ReadonlyArray<readonly [string, Entry]> | undefined {
    const d = normalizePath(dir)
    if (this.entries.get(d)?.kind !== "dir") return undefined
    return [...this.entries].filter(([p]) => p !== "/" && parentOf(p) === d)
  }

  /** The path and everything under it. */
  subtree(path: string): ReadonlyArray<readonly [string, Entry]> {
    const p = normalizePath(path)
    return [...this.entries].filter(([q]) => q === p || q.startsWith(`${p}/`))
  }

  remove(path: string): boolean {
    const items = this.subtree(path)
    for (const [p] of items) if (p !== "/") this.entries.delete(p)
    return items.length > 0
  }

  move(from: string, to: string): boolean {
    const src = normalizePath(from)
    const dst = normalizePath(to)
    if (src === "/" || !this.entries.has(src) || this.entries.has(dst)) return false
    this.ensureDir(parentOf(dst))
    for (const [p, e] of this.subtree(src)) {
      this.entries.delete(p)
      this.entries.set(dst + p.slice(src.length), e)
    }
    return true
  }

  chmod(path: string, mode: number): boolean {
    const p = normalizePath(path)
    const e = this.entries.get(p)
    if (e === undefined) return false
    this.entries.set(p, { ...e, mode })
    return true
  }

  /** A copy whose entries are shared (entries are immutable; every change replaces one). */
  snapshot(): Map<string, Entry> {
    return new Map(this.entries)
  }

  /** Bytes a backup of this tree would hold: total size, for `bytes` and the archive size. */
  totalBytes(): number {
    let n = 0
    for (const e of this.entries.values()) if (e.kind === "file") n += sizeOf(e.data)
    return n
  }
}

/** The bytes of a file; synthetic content materialized (callers check the size first). */
export const materialize = (data: FileData): Buffer => {
  if (Buffer.isBuffer(data)) return data
  const out = Buffer.allocUnsafe(data.syntheticBytes)
  for (let i = 0; i < out.length; i++) out[i] = syntheticByte(i)
  return out
}

const CHUNK = 64 * 1024
// 251 is prime and CHUNK's offsets advance by CHUNK % 251, so one template of CHUNK + 251 bytes serves every chunk.
const template = Buffer.from(Array.from({ length: CHUNK + 251 }, (_, i) => syntheticByte(i)))

/** A download cut short on purpose (an injected fault): the front drops the connection instead of ending the body. */
export class CutShort extends Data.TaggedError("CutShort")<{ readonly after: number }> {}

function* syntheticChunks(end: number): Generator<Uint8Array> {
  for (let offset = 0; offset < end; offset += CHUNK) {
    const start = offset % 251
    yield template.subarray(start, start + Math.min(CHUNK, end - offset))
  }
}

/**
 * A file's bytes as a stream, a synthetic file generated chunk by chunk as the reader pulls (memory stays flat). With
 * `limit`, the stream fails with CutShort after that many bytes.
 */
export const dataStream = (data: FileData, limit?: number): Stream.Stream<Uint8Array, CutShort> => {
  const size = sizeOf(data)
  const end = limit === undefined ? size : Math.min(size, limit)
  const bytes = Buffer.isBuffer(data)
    ? Stream.make(data.subarray(0, end))
    : Stream.fromIterable({ [Symbol.iterator]: () => syntheticChunks(end) }, { chunkSize: 1 })
  return end < size ? Stream.concat(bytes, Stream.fail(new CutShort({ after: end }))) : bytes
}
