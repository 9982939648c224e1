// The file manager over our relay of the panel's Client API: list and navigate folders, open and edit text
// (contents/write; binary, oversized or mixed-line-ending files are offered as a download instead, and a save writes
// exactly the bytes edited), upload (multipart to our streaming URL), download (our streaming URL), rename, delete,
// create folders and files.
import { api, type FileObject, type ListOf, request } from "../api.ts"
import { announce } from "../app.ts"
import { disableControls, h } from "../dom.ts"
import { formatBytes, formatDateTime, t } from "../i18n.ts"
import { decodeTextFile, encodeTextFile, MAX_EDIT_BYTES, type Refusal, refusalFromListing } from "../textFile.ts"
import { confirmDialog, errorBox, promptDialog, run } from "../ui.ts"

const join = (dir: string, name: string) => (dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`)
const parent = (dir: string) => {
  const parts = dir.split("/").filter((p) => p !== "")
  parts.pop()
  return `/${parts.join("/")}`
}

/** Follows a signed URL of ours (download): the browser saves the attachment, the page stays. */
export const followDownload = (url: string): void => {
  const a = h("a", { href: url, download: "", hidden: true, "data-external": "" })
  document.body.append(a)
  a.click()
  a.remove()
}

export const fileManager = (identifier: string): { readonly el: HTMLElement; load(): Promise<void>; disable(): void } => {
  const base = `/api/client/servers/${encodeURIComponent(identifier)}/files`
  let directory = "/"
  let disabled = false
  const errors = errorBox("files-error")
  const pathEl = h("p", { "data-testid": "files-path", "aria-live": "polite" })
  const listEl = h("div", { "data-testid": "files-list" })
  const up = h("button", { type: "button", "data-testid": "files-up" }, t("files.up"))
  const newFolder = h("button", { type: "button", "data-testid": "files-new-folder" }, t("files.newFolder"))
  const newFile = h("button", { type: "button", "data-testid": "files-new-file" }, t("files.newFile"))
  const uploadInput = h("input", { type: "file", id: "files-upload-input", multiple: true, class: "visually-hidden-file", "data-testid": "files-upload-input" })
  const uploadLabel = h("label", { for: "files-upload-input", class: "button", "data-testid": "files-upload" }, t("files.upload"))
  const editor = h("div", { class: "editor card", hidden: true, "data-testid": "file-editor" })
  const toolbar = h("div", { class: "row wrap" }, up, newFolder, newFile, uploadInput, uploadLabel)
  const el = h("div", { class: "stack" }, pathEl, toolbar, errors.el, listEl, editor)

  const load = async () => {
    pathEl.textContent = t("files.path", { path: directory })
    up.disabled = disabled || directory === "/"
    try {
      const list = await api.get<ListOf<FileObject>>(`${base}/list?directory=${encodeURIComponent(directory)}`)
      errors.clear()
      draw(list.data.map((d) => d.attributes))
    } catch (error) {
      errors.show(error)
      listEl.replaceChildren()
    }
  }

  const go = (dir: string) => {
    directory = dir
    editor.hidden = true
    void load()
  }

  const closeEditor = () => {
    editor.hidden = true
    editor.replaceChildren()
  }

  /** In place of the editor: why this file is not opened here, and its download. */
  const notEditable = (path: string, size: number | null, refusal: Refusal) => {
    const name = path.split("/").pop() ?? path
    const reason = refusal === "tooLarge"
      ? t("files.tooLarge", { name, size: formatBytes(size ?? 0), max: formatBytes(MAX_EDIT_BYTES) })
      : refusal === "binary" ? t("files.binary", { name }) : t("files.mixedLineEndings", { name })
    const get = h("button", { type: "button", class: "primary", "data-testid": "file-editor-download" }, t("files.download"))
    const close = h("button", { type: "button", "data-testid": "file-editor-close" }, t("common.close"))
    get.addEventListener("click", () => void download(path))
    close.addEventListener("click", closeEditor)
    editor.replaceChildren(
      h("h3", { id: "file-editor-title" }, t("files.notEditable")),
      h("p", { "data-testid": "file-not-editable", "data-reason": refusal }, reason),
      h("div", { class: "row end" }, close, get)
    )
    editor.hidden = false
    get.focus()
  }

  const openEditor = async (path: string, listed?: FileObject) => {
    const early = listed === undefined ? null : refusalFromListing(listed)
    if (early !== null) return notEditable(path, listed?.size ?? null, early)
    await run(el, async () => {
      const bytes = await api.get<Uint8Array>(`${base}/contents?file=${encodeURIComponent(path)}`, { bytes: true })
      const file = decodeTextFile(bytes)
      if (typeof file === "string") return notEditable(path, bytes.byteLength, file)
      const area = h("textarea", { id: "file-editor-content", rows: 16, spellcheck: "false", class: "code", "data-testid": "file-editor-content" })
      area.value = file.text
      const save = h("button", { type: "submit", class: "primary", "data-testid": "file-editor-save" }, t("common.save"))
      const close = h("button", { type: "button", "data-testid": "file-editor-close" }, t("common.close"))
      const editErrors = errorBox("file-editor-error")
      const form = h("form", {},
        h("h3", { id: "file-editor-title" }, t("files.editing", { path })),
        h("label", { for: "file-editor-content", class: "sr-only" }, t("files.content")),
        area, editErrors.el, h("div", { class: "row end" }, close, save))
      form.addEventListener("submit", (event) => {
        event.preventDefault()
        void run(form, async () => {
          // The text as UTF-8 bytes with the file's own line endings: nothing re-encoded on the way.
          const body = encodeTextFile(area.value, file.lineEnding)
          await request<void>("POST", `${base}/write?file=${encodeURIComponent(path)}`, { raw: body, contentType: "text/plain; charset=utf-8" })
          await load()
        }, { errors: editErrors, success: t("files.saved") })
      })
      close.addEventListener("click", closeEditor)
      editor.replaceChildren(form)
      editor.hidden = false
      area.focus()
    }, { errors })
  }

  const download = async (path: string) => {
    await run(el, async () => {
      const signed = await api.get<{ attributes: { url: string } }>(`${base}/download?file=${encodeURIComponent(path)}`)
      followDownload(signed.attributes.url)
    }, { errors })
  }

  const rename = async (name: string) => {
    const to = await promptDialog(t("files.renamePrompt", { name }), name, "files-rename-input")
    if (to === null || to === name) return
    await run(el, async () => {
      await api.put(`${base}/rename`, { root: directory, files: [{ from: name, to }] })
      await load()
    }, { errors, success: t("common.done") })
  }

  const remove = async (name: string) => {
    if (!(await confirmDialog(t("common.confirmDelete", { name }), { danger: true, confirmLabel: t("common.delete") }))) return
    await run(el, async () => {
      await api.post(`${base}/delete`, { root: directory, files: [name] })
      await load()
    }, { errors, success: t("common.done") })
  }

  const draw = (files: ReadonlyArray<FileObject>) => {
    const sorted = [...files].sort((a, b) => Number(a.is_file) - Number(b.is_file) || a.name.localeCompare(b.name))
    if (sorted.length === 0) {
      listEl.replaceChildren(h("p", { class: "muted" }, t("files.empty")))
      return
    }
    listEl.replaceChildren(h("table", { class: "table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("common.name")), h("th", { scope: "col" }, t("files.size")),
        h("th", { scope: "col" }, t("files.modified")), h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("common.actions"))))),
      h("tbody", {}, sorted.map((file) => {
        const path = join(directory, file.name)
        const open = h("button", { type: "button", class: "link-button", "data-testid": `file-open-${file.name}`, disabled }, file.is_file ? file.name : `${file.name}/`)
        open.addEventListener("click", () => (file.is_file ? void openEditor(path, file) : go(path)))
        const actions: Array<HTMLButtonElement> = []
        const action = (label: string, testid: string, onClick: () => void, className = "") => {
          const b = h("button", { type: "button", class: className, "data-testid": `${testid}-${file.name}`, "aria-label": `${label} ${file.name}`, disabled }, label)
          b.addEventListener("click", onClick)
          actions.push(b)
        }
        if (file.is_file) action(t("files.download"), "file-download", () => void download(path))
        action(t("files.rename"), "file-rename", () => void rename(file.name))
        action(t("common.delete"), "file-delete", () => void remove(file.name), "danger-outline")
        return h("tr", { "data-testid": `file-${file.name}`, "data-kind": file.is_file ? "file" : "folder" },
          h("td", { "data-label": t("common.name") }, open),
          h("td", { "data-label": t("files.size") }, file.is_file ? formatBytes(file.size) : t("files.folder")),
          h("td", { "data-label": t("files.modified") }, formatDateTime(file.modified_at)),
          h("td", { class: "actions" }, actions))
      }))))
  }

  up.addEventListener("click", () => go(parent(directory)))
  newFolder.addEventListener("click", () => {
    void (async () => {
      const name = await promptDialog(t("files.newFolderName"), "", "files-new-folder-name")
      if (name === null) return
      await run(el, async () => {
        await api.post(`${base}/create-folder`, { root: directory, name })
        await load()
      }, { errors, success: t("common.done") })
    })()
  })
  newFile.addEventListener("click", () => {
    void (async () => {
      const name = await promptDialog(t("files.newFileName"), "", "files-new-file-name")
      if (name === null) return
      const path = join(directory, name)
      await run(el, async () => {
        await request<void>("POST", `${base}/write?file=${encodeURIComponent(path)}`, { raw: "", contentType: "text/plain" })
        await load()
      }, { errors })
      await openEditor(path)
    })()
  })
  uploadInput.addEventListener("change", () => {
    const files = [...(uploadInput.files ?? [])]
    if (files.length === 0) return
    void run(el, async () => {
      announce(t("files.uploading"))
      const signed = await api.get<{ attributes: { url: string } }>(`${base}/upload`)
      const url = signed.attributes.url
      const form = new FormData()
      for (const file of files) form.append("files", file, file.name)
      await request<void>("POST", `${url}${url.includes("?") ? "&" : "?"}directory=${encodeURIComponent(directory)}`, { raw: form })
      uploadInput.value = ""
      await load()
    }, { errors, success: t("files.uploaded") })
  })

  return {
    el,
    load,
    disable() {
      disabled = true
      disableControls(el)
      uploadLabel.setAttribute("aria-disabled", "true")
    }
  }
}

