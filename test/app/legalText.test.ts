// The legal texts' small Markdown subset (app/web/src/legalText.ts): headings, paragraphs, lists, bold and links;
// a link to anything but the web, e-mail or a panel path stays text, and markup is never interpreted.
import { describe, expect, it } from "vitest"
import { isSafeHref, parseInlines, parseLegalText } from "../../app/web/src/legalText.ts"

describe("parseLegalText", () => {
  it("reads headings, paragraphs joined across lines, and list items", () => {
    expect(parseLegalText("# Éditeur\n\nZH SAS,\ncapital 10 000 €.\n\n## Hébergeur\n- OVH\n- Roubaix\nsuite\n")).toEqual([
      { kind: "heading", level: 1, inlines: [{ kind: "text", text: "Éditeur" }] },
      { kind: "paragraph", inlines: [{ kind: "text", text: "ZH SAS, capital 10 000 €." }] },
      { kind: "heading", level: 2, inlines: [{ kind: "text", text: "Hébergeur" }] },
      { kind: "list", items: [[{ kind: "text", text: "OVH" }], [{ kind: "text", text: "Roubaix" }]] },
      { kind: "paragraph", inlines: [{ kind: "text", text: "suite" }] }
    ])
  })

  it("reads bold and safe links; HTML stays text and unsafe links stay as written", () => {
    expect(parseInlines("Voir **l'article 3** et [le médiateur](https://m.example/x) <b>x</b>")).toEqual([
      { kind: "text", text: "Voir " },
      { kind: "strong", text: "l'article 3" },
      { kind: "text", text: " et " },
      { kind: "link", text: "le médiateur", href: "https://m.example/x" },
      { kind: "text", text: " <b>x</b>" }
    ])
    expect(parseInlines("[clic](javascript:alert(1))")).toEqual([{ kind: "text", text: "[clic](javascript:alert(1))" }])
    expect(parseInlines("[a](//evil.example/x) [b](data:text/html,x)").every((part) => part.kind === "text")).toBe(true)
    expect(parseInlines("[CGV](/legal/terms) [mail](mailto:dpo@zh.example)").filter((p) => p.kind === "link").map((p) => p.kind === "link" && p.href))
      .toEqual(["/legal/terms", "mailto:dpo@zh.example"])
  })

  it("accepts only web, e-mail and panel paths as link targets", () => {
    expect(["https://a.example", "http://a.example/x", "mailto:a@b.example", "/legal/privacy"].every(isSafeHref)).toBe(true)
    expect(["javascript:alert(1)", "JAVASCRIPT:x", "//evil.example", "data:text/html,x", "vbscript:x", "legal/terms", "https://a b"].some(isSafeHref)).toBe(false)
  })
})
