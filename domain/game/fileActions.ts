// What a customer may do with a game server's files and backups through our relay, by method and sub-path below the
// server: the panel's Client-API calls we forward as they are, the signed URLs we replace by our own streaming routes,
// and what we refuse outright. Anything else is not offered.
import type { ClientRequest, DownloadTarget } from "../../ports/GamePanel.ts"

export type FileAction =
  | { readonly _tag: "Relay"; readonly method: ClientRequest["method"]; readonly body: "none" | "json" | "text" }
  | { readonly _tag: "SignedUrl"; readonly to: string }
  | { readonly _tag: "Download"; readonly target: (query: URLSearchParams) => DownloadTarget | undefined }
  | { readonly _tag: "Upload" }
  | { readonly _tag: "Refused"; readonly code: string; readonly message: string }

const UUID = "[0-9a-fA-F-]{36}"
const FILE_ACTIONS_JSON = ["rename", "copy", "delete", "create-folder", "compress", "decompress", "chmod"]

/** The allowed calls, by method and sub-path below the server (`files/list`, `backups/<uuid>/lock` …); anything else is none. */
export const fileAction = (method: string, path: string): FileAction | undefined => {
  const is = (m: string, pattern: string) => method === m && new RegExp(`^${pattern}$`).test(path)
  if (is("GET", "files/list") || is("GET", "files/contents")) return { _tag: "Relay", method: "GET", body: "none" }
  if (is("POST", "files/write")) return { _tag: "Relay", method: "POST", body: "text" }
  if (method === "POST" && FILE_ACTIONS_JSON.some((a) => path === `files/${a}`)) return { _tag: "Relay", method: "POST", body: "json" }
  if (is("PUT", "files/rename")) return { _tag: "Relay", method: "PUT", body: "json" }
  if (is("POST", "files/pull")) {
    // The node would fetch any URL from inside the hosting network on the customer's behalf.
    return { _tag: "Refused", code: "REMOTE_DOWNLOAD_DISABLED", message: "Downloading from a URL onto the server is not offered; upload the file instead." }
  }
  if (is("GET", "files/download")) return { _tag: "SignedUrl", to: "files/download/stream" }
  if (is("GET", "files/download/stream")) {
    return { _tag: "Download", target: (q) => { const f = q.get("file"); return f === null || f === "" ? undefined : { _tag: "File", path: f } } }
  }
  if (is("GET", "files/upload")) return { _tag: "SignedUrl", to: "files/upload/stream" }
  if (is("POST", "files/upload/stream")) return { _tag: "Upload" }
  if (is("GET", "backups") ) return { _tag: "Relay", method: "GET", body: "none" }
  if (is("POST", "backups")) return { _tag: "Relay", method: "POST", body: "json" }
  if (is("GET", `backups/${UUID}`)) return { _tag: "Relay", method: "GET", body: "none" }
  if (is("DELETE", `backups/${UUID}`)) return { _tag: "Relay", method: "DELETE", body: "none" }
  if (is("POST", `backups/${UUID}/lock`)) return { _tag: "Relay", method: "POST", body: "none" }
  if (is("POST", `backups/${UUID}/restore`)) return { _tag: "Relay", method: "POST", body: "json" }
  if (is("GET", `backups/${UUID}/download`)) return { _tag: "SignedUrl", to: `${path}/stream` }
  if (is("GET", `backups/${UUID}/download/stream`)) {
    const uuid = path.split("/")[1]!
    return { _tag: "Download", target: () => ({ _tag: "Backup", uuid }) }
  }
  return undefined
}
