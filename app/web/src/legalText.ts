// The legal pages' texts (LEGAL_DIR) as blocks the panel draws with DOM nodes, never as HTML: a small, fixed Markdown
// subset. Blank lines separate blocks; "# ", "## ", "### " start headings; "- " or "* " list items; inside a line,
// **bold** and [text](href) links whose href is http(s), mailto: or a path on the panel. Anything else is text.

export type Inline =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "strong"; readonly text: string }
  | { readonly kind: "link"; readonly text: string; readonly href: string }

export type Block =
  | { readonly kind: "heading"; readonly level: 1 | 2 | 3; readonly inlines: ReadonlyArray<Inline> }
  | { readonly kind: "paragraph"; readonly inlines: ReadonlyArray<Inline> }
  | { readonly kind: "list"; readonly items: ReadonlyArray<ReadonlyArray<Inline>> }

/** Links the page may carry: the web, e-mail, or a path of the panel itself (never javascript:, data:, //host). */
export const isSafeHref = (href: string): boolean => /^(https?:\/\/[^\s]+|mailto:[^\s]+|\/(?!\/)[^\s]*)$/i.test(href)

const INLINE = /\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g

export const parseInlines = (line: string): ReadonlyArray<Inline> => {
  const out: Array<Inline> = []
  let last = 0
  const push = (text: string) => {
    if (text === "") return
    const previous = out.at(-1)
    if (previous?.kind === "text") out[out.length - 1] = { kind: "text", text: previous.text + text }
    else out.push({ kind: "text", text })
  }
  for (const match of line.matchAll(INLINE)) {
    push(line.slice(last, match.index))
    last = match.index + match[0].length
    const [whole, bold, linkText, href] = match
    if (bold !== undefined) out.push({ kind: "strong", text: bold })
    else if (linkText !== undefined && href !== undefined && isSafeHref(href)) out.push({ kind: "link", text: linkText, href })
    else push(whole)
  }
  push(line.slice(last))
  return out
}

export const parseLegalText = (text: string): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  for (const chunk of text.replace(/\r\n?/g, "\n").split(/\n\s*\n/)) {
    const lines = chunk.split("\n").map((l) => l.trim()).filter((l) => l !== "")
    let paragraph: Array<string> = []
    let items: Array<ReadonlyArray<Inline>> = []
    const flush = () => {
      if (paragraph.length > 0) blocks.push({ kind: "paragraph", inlines: parseInlines(paragraph.join(" ")) })
      if (items.length > 0) blocks.push({ kind: "list", items })
      paragraph = []
      items = []
    }
    for (const line of lines) {
      const heading = /^(#{1,3})\s+(.*)$/.exec(line)
      const item = /^[-*]\s+(.*)$/.exec(line)
      if (heading !== null) {
        flush()
        blocks.push({ kind: "heading", level: heading[1]!.length as 1 | 2 | 3, inlines: parseInlines(heading[2]!) })
      } else if (item !== null) {
        if (paragraph.length > 0) flush()
        items.push(parseInlines(item[1]!))
      } else {
        if (items.length > 0) flush()
        paragraph.push(line)
      }
    }
    flush()
  }
  return blocks
}
