// What a customer may do with a game server's files and backups through our relay, by method and sub-path below the
// server: the operations we relay (their query and body as they are), the signed URLs we replace by our own
// streaming routes, and what we refuse outright. Anything else is not offered.
import type { DownloadTarget, FileOperation } from "../../ports/GamePanel.ts"

export type FileAction =
  | { readonly _tag: "Relay"; readonly operation: FileOperation; readonly body: "none" | "json" | "text" }
  | { readonly _tag: "SignedUrl"; readonly to: string }
  | { readonly _tag: "Download"; readonly target: (query: URLSearchParams) => DownloadTarget | undefined }
  | { readonly _tag: "Upload" }
  | { readonly _tag: "Refused"; readonly code: string; readonly message: string }

const UUID = "[0-9a-fA-F-]{36}"
/** The file operations taking a JSON body, by the sub-path they are posted to. */
const FILE_ACTIONS_JSON: Readonly<Record<string, FileOperation>> = {
  copy: { _tag: "CopyFile" },
  delete: { _tag: "DeleteFiles" },
  "create-folder": { _tag: "CreateFolder" },
  compress: { _tag: "CompressFiles" },
  decompress: { _tag: "DecompressFile" },
  chmod: { _tag: "ChangeFileModes" }
}

/** The allowed calls, by method and sub-path below the server (`files/list`, `backups/<uuid>/lock` …); anything else is none. */
export const fileAction = (method: string, path: string): FileAction | undefined => {
  const is = (m: string, pattern: string) => method === m && new RegExp(`^${pattern}$`).test(path)
  const relay = (operation: FileOperation, body: "none" | "json" | "text"): FileAction => ({ _tag: "Relay", operation, body })
  const backup = path.split("/")[1] ?? ""
  if (is("GET", "files/list")) return relay({ _tag: "ListFiles" }, "none")
  if (is("GET", "files/contents")) return relay({ _tag: "ReadFile" }, "none")
  if (is("POST", "files/write")) return relay({ _tag: "WriteFile" }, "text")
  const posted = method === "POST" && path.startsWith("files/") ? path.slice("files/".length) : ""
  if (Object.hasOwn(FILE_ACTIONS_JSON, posted)) return relay(FILE_ACTIONS_JSON[posted]!, "json")
  if (is("PUT", "files/rename")) return relay({ _tag: "RenameFiles" }, "json")
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
  if (is("GET", "backups")) return relay({ _tag: "ListBackups" }, "none")
  if (is("POST", "backups")) return relay({ _tag: "CreateBackup" }, "json")
  if (is("GET", `backups/${UUID}`)) return relay({ _tag: "ReadBackup", backup }, "none")
  if (is("DELETE", `backups/${UUID}`)) return relay({ _tag: "DeleteBackup", backup }, "none")
  if (is("POST", `backups/${UUID}/lock`)) return relay({ _tag: "ToggleBackupLock", backup }, "none")
  if (is("POST", `backups/${UUID}/restore`)) return relay({ _tag: "RestoreBackup", backup }, "json")
  if (is("GET", `backups/${UUID}/download`)) return { _tag: "SignedUrl", to: `${path}/stream` }
  if (is("GET", `backups/${UUID}/download/stream`)) return { _tag: "Download", target: () => ({ _tag: "Backup", uuid: backup }) }
  return undefined
}
