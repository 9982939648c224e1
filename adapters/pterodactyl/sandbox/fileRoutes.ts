// The Client API file manager (reference/pterodactyl.md §4.1) over the server's in-memory tree; errors Wings would
// raise come back wrapped as DaemonConnectionException, downloads and uploads as single-use signed URLs to Wings.
import { CLIENT, signedUrl, tokenContext, usableServer } from "./clientAccess.ts"
import { baseName, type Entry, type FileTree, joinPath, materialize, normalizePath, parentOf, sizeOf } from "./FileTree.ts"
import { at, validate } from "./rules.ts"
import { obj, type PanelRoute, route, type RouteContext } from "./Route.ts"
import { fileObject } from "./transformers.ts"
import { daemonError, item, list, noContent, ok, panelError } from "./wire.ts"

const FILES = `${CLIENT}/files`
const MAX_EDIT_BYTES = 4 * 1024 * 1024

const missing = () => daemonError(404, "The requested resource was not found on this server")

const strings = (v: unknown): ReadonlyArray<string> => (Array.isArray(v) ? v.map(String) : [])

const need = (ctx: RouteContext, rules: Readonly<Record<string, string>>) => {
  const body = obj(ctx.body)
  validate(Object.entries(rules).map(([field, r]) => ({ field, rules: r, ...at(body, field) })))
  return body
}

/** "name copy.ext", then "name copy 1.ext"… as Wings names copies. */
const copyName = (tree: FileTree, path: string): string => {
  const dir = parentOf(path)
  const base = baseName(path)
  const dot = base.lastIndexOf(".")
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ""]
  for (let i = 0; ; i++) {
    const candidate = joinPath(dir, `${stem} copy${i === 0 ? "" : ` ${i}`}${ext}`)
    if (tree.get(candidate) === undefined) return candidate
  }
}

const archiveStamp = (ms: number) => new Date(ms).toISOString().replace(/[:]/g, "").replace(/\.\d{3}Z$/, "+0000")

export const fileRoutes: ReadonlyArray<PanelRoute> = [
  route("GET", `${FILES}/list`, (ctx) => {
    const server = usableServer(ctx)
    const entries = server.files.list(ctx.query.get("directory") ?? "/")
    if (entries === undefined) throw missing()
    return ok(list("file_object", entries.map(([p, e]) => fileObject(baseName(p), e))))
  }),
  route("GET", `${FILES}/contents`, (ctx) => {
    const server = usableServer(ctx)
    const entry = server.files.get(ctx.query.get("file") ?? "")
    if (entry?.kind !== "file") throw missing()
    if (sizeOf(entry.data) > MAX_EDIT_BYTES) {
      throw panelError(400, "FileSizeTooLargeException", "The file you are attempting to open is too large to view in the file editor.")
    }
    return { status: 200, bytes: materialize(entry.data) }
  }),
  route("GET", `${FILES}/download`, (ctx) => {
    const server = usableServer(ctx)
    const path = normalizePath(ctx.query.get("file") ?? "")
    const token = ctx.sim.tokens.issue("file-download", tokenContext(ctx, server), server.uuid, ctx.sim.settings.signedUrlTtlMs, {
      file_path: path,
      user_uuid: ctx.user.uuid
    })
    return ok(signedUrl(`${ctx.sim.nodeUrl}/download/file?token=${token}`))
  }),
  route("POST", `${FILES}/write`, (ctx) => {
    const server = usableServer(ctx)
    const file = ctx.query.get("file")
    if (file === null || file === "") throw panelError(422, "ValidationException", "The file field is required.")
    server.files.write(file, Buffer.from(ctx.raw))
    return noContent()
  }),
  route("PUT", `${FILES}/rename`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { root: "present|nullable|string", files: "required|array" })
    const root = typeof body["root"] === "string" ? body["root"] : "/"
    for (const f of Array.isArray(body["files"]) ? body["files"] : []) {
      const { from, to } = obj(f)
      if (!server.files.move(joinPath(root, String(from)), joinPath(root, String(to)))) throw missing()
    }
    return noContent()
  }),
  route("POST", `${FILES}/copy`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { location: "required|string" })
    const path = normalizePath(String(body["location"]))
    const entry = server.files.get(path)
    if (entry?.kind !== "file") throw missing()
    server.files.write(copyName(server.files, path), entry.data, entry.mode)
    return noContent()
  }),
  route("POST", `${FILES}/delete`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { root: "present|nullable|string", files: "required|array" })
    const root = typeof body["root"] === "string" ? body["root"] : "/"
    for (const name of strings(body["files"])) server.files.remove(joinPath(root, name))
    return noContent()
  }),
  route("POST", `${FILES}/create-folder`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { root: "sometimes|nullable|string", name: "required|string" })
    server.files.mkdir(joinPath(typeof body["root"] === "string" ? body["root"] : "/", String(body["name"])))
    return noContent()
  }),
  route("POST", `${FILES}/compress`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { root: "present|nullable|string", files: "required|array" })
    const root = typeof body["root"] === "string" ? body["root"] : "/"
    // The archive keeps the packed entries (relative to root) so decompress can unpack them; its bytes are a stand-in.
    const packed = new Map<string, Entry>()
    for (const name of strings(body["files"])) {
      for (const [p, e] of server.files.subtree(joinPath(root, name))) packed.set(p.slice(normalizePath(root).length).replace(/^\/?/, "/"), e)
    }
    if (packed.size === 0) throw missing()
    const path = joinPath(root, `archive-${archiveStamp(ctx.sim.clock.now())}.tar.gz`)
    const bytes = Buffer.from(JSON.stringify([...packed.keys()]))
    server.files.entries.set(path, { kind: "file", data: bytes, mode: 0o644, modifiedAt: ctx.sim.clock.now(), createdAt: ctx.sim.clock.now(), archive: packed })
    const entry = server.files.get(path)
    if (entry === undefined) throw missing()
    return ok(item("file_object", fileObject(baseName(path), entry)))
  }),
  route("POST", `${FILES}/decompress`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { root: "present|nullable|string", file: "required|string" })
    const root = typeof body["root"] === "string" ? body["root"] : "/"
    const entry = server.files.get(joinPath(root, String(body["file"])))
    if (entry?.kind !== "file") throw missing()
    if (entry.archive === undefined) throw daemonError(400, "unsupported archive format")
    for (const [p, e] of entry.archive) server.files.entries.set(joinPath(root, p), e)
    return noContent()
  }),
  route("POST", `${FILES}/chmod`, (ctx) => {
    const server = usableServer(ctx)
    const body = need(ctx, { root: "present|nullable|string", files: "required|array" })
    const root = typeof body["root"] === "string" ? body["root"] : "/"
    for (const f of Array.isArray(body["files"]) ? body["files"] : []) {
      const { file, mode } = obj(f)
      if (!server.files.chmod(joinPath(root, String(file)), parseInt(String(mode), 8))) throw missing()
    }
    return noContent()
  }),
  route("POST", `${FILES}/pull`, (ctx) => {
    usableServer(ctx)
    need(ctx, { url: "required|string" })
    // The sandbox's Wings runs with `api.disable_remote_download: true` (§4.1): nothing leaves loopback.
    throw daemonError(400, "remote downloads are disabled")
  }),
  route("GET", `${FILES}/upload`, (ctx) => {
    const server = usableServer(ctx)
    const token = ctx.sim.tokens.issue("file-upload", tokenContext(ctx, server), server.uuid, ctx.sim.settings.signedUrlTtlMs, {
      user_uuid: ctx.user.uuid
    })
    return ok(signedUrl(`${ctx.sim.nodeUrl}/upload/file?token=${token}`))
  })
]
