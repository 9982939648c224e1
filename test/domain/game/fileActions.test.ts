// What the files and backups relay offers: the panel's calls we forward, the signed URLs we replace by our own
// streaming routes, the remote download we refuse, and nothing else.
import { describe, expect, it } from "vitest"
import { fileAction } from "../../../domain/game/fileActions.ts"

const UUID = "0b7c0d1e-1111-4222-8333-944455566677"

describe("the game file actions", () => {
  it("forwards listing, reading, writing and the JSON file actions with the body each takes", () => {
    expect(fileAction("GET", "files/list")).toEqual({ _tag: "Relay", method: "GET", body: "none" })
    expect(fileAction("POST", "files/write")).toEqual({ _tag: "Relay", method: "POST", body: "text" })
    for (const action of ["rename", "copy", "delete", "create-folder", "compress", "decompress", "chmod"]) {
      expect(fileAction("POST", `files/${action}`)).toEqual({ _tag: "Relay", method: "POST", body: "json" })
    }
    expect(fileAction("DELETE", `backups/${UUID}`)).toEqual({ _tag: "Relay", method: "DELETE", body: "none" })
  })

  it("hands out our own streaming routes for downloads and uploads, and names the file or backup from them", () => {
    expect(fileAction("GET", "files/download")).toEqual({ _tag: "SignedUrl", to: "files/download/stream" })
    expect(fileAction("GET", `backups/${UUID}/download`)).toEqual({ _tag: "SignedUrl", to: `backups/${UUID}/download/stream` })
    const file = fileAction("GET", "files/download/stream")
    expect(file?._tag === "Download" ? file.target(new URLSearchParams("file=/a.txt")) : null).toEqual({ _tag: "File", path: "/a.txt" })
    expect(file?._tag === "Download" ? file.target(new URLSearchParams("")) : null).toBeUndefined()
    const backup = fileAction("GET", `backups/${UUID}/download/stream`)
    expect(backup?._tag === "Download" ? backup.target(new URLSearchParams()) : null).toEqual({ _tag: "Backup", uuid: UUID })
  })

  it("refuses a download from a URL onto the server, and offers nothing else", () => {
    expect(fileAction("POST", "files/pull")).toMatchObject({ _tag: "Refused", code: "REMOTE_DOWNLOAD_DISABLED" })
    for (const [method, path] of [["GET", "files/write"], ["PATCH", "files/list"], ["GET", "settings/rename"], ["GET", "backups/not-a-uuid"], ["GET", "files/list/../../startup"]]) {
      expect(fileAction(method!, path!), `${method} ${path}`).toBeUndefined()
    }
  })
})
