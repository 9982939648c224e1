// A bounded multipart/form-data parser for Wings uploads (reference/pterodactyl.md §4.1): the body is read up to a
// limit first (the caller answers 413 beyond it), then split on the boundary; only parts with a filename matter.
export interface Part {
  readonly name: string
  readonly filename: string | undefined
  readonly data: Buffer
}

export const boundaryOf = (contentType: string | undefined): string | undefined => {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? "")
  return m === null ? undefined : (m[1] ?? m[2])?.trim()
}

const headerParam = (header: string, param: string): string | undefined => {
  const m = new RegExp(`${param}="([^"]*)"`, "i").exec(header)
  return m === null ? undefined : m[1]
}

export const parseMultipart = (body: Buffer, boundary: string): ReadonlyArray<Part> => {
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: Array<Part> = []
  let start = body.indexOf(delimiter)
  while (start !== -1) {
    const afterDelimiter = start + delimiter.length
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString() === "--") break
    const next = body.indexOf(delimiter, afterDelimiter)
    if (next === -1) break
    // Each part: CRLF, headers, CRLF CRLF, data, CRLF, then the next delimiter.
    const chunk = body.subarray(afterDelimiter + 2, next - 2)
    const split = chunk.indexOf("\r\n\r\n")
    if (split !== -1) {
      const headers = chunk.subarray(0, split).toString("utf8")
      const disposition = headers.split("\r\n").find((h) => h.toLowerCase().startsWith("content-disposition:")) ?? ""
      parts.push({
        name: headerParam(disposition, "name") ?? "",
        filename: headerParam(disposition, "filename"),
        data: chunk.subarray(split + 4)
      })
    }
    start = next
  }
  return parts
}
