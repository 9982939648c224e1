// The reference of (i): the least a download relay can be on this machine. One node:http process that GETs the URL
// it is given (`/?to=<url>`) and pipes the answer to its caller: no session, no ownership check, no signed-URL call
// to a panel, no limits. Not product code: the bench starts it beside the server so the cost of one extra hop is
// measured in the same run, and ours is judged against it as well as against the node itself.
import { createServer, get } from "node:http"
import { pipeline } from "node:stream"

const server = createServer((req, res) => {
  const to = new URL(req.url ?? "/", "http://bare").searchParams.get("to")
  if (to === null) return void res.writeHead(400).end()
  const upstream = get(to, (answer) => {
    const length = answer.headers["content-length"]
    res.writeHead(answer.statusCode ?? 502, {
      "content-type": answer.headers["content-type"] ?? "application/octet-stream",
      ...(length === undefined ? {} : { "content-length": length })
    })
    pipeline(answer, res, () => {})
  })
  upstream.once("error", () => res.destroy())
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.once("SIGTERM", () => process.exit(0))
