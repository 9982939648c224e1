// Task status and log (reference/proxmox.md §2.3): tasks are found on the node their UPID names; a UPID asked of the
// wrong node, or not yet written, is a 400 "no such task".
import { paramError } from "./PveError.ts"
import { reply, type Route, type RouteContext } from "./Route.ts"
import type { TaskRecord } from "./Tasks.ts"

const UPID = /^UPID:[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8,9}:[0-9A-Fa-f]{8}:[^:\s]+:[^:\s]*:[^:\s]+:$/

const taskOf = ({ params, sim }: RouteContext): TaskRecord => {
  const upid = params.req("upid")
  if (!UPID.test(upid)) throw paramError({ upid: `unable to parse worker upid '${upid}'` })
  const task = sim.tasks.get(upid)
  if (task === undefined || task.node !== params.req("node")) throw paramError({ upid: "no such task" })
  return task
}

export const taskRoutes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/nodes/{node}/tasks/{upid}/status",
    proxyNode: true,
    handle: (context) => {
      const t = taskOf(context)
      return reply({
        upid: t.upid,
        node: t.node,
        pid: t.pid,
        pstart: t.pstart,
        starttime: t.starttime,
        type: t.type,
        id: t.id,
        user: t.user,
        status: t.status,
        ...(t.status === "stopped" && t.exitstatus !== undefined ? { exitstatus: t.exitstatus } : {})
      })
    }
  },
  {
    method: "GET",
    path: "/nodes/{node}/tasks/{upid}/log",
    proxyNode: true,
    handle: (context) => {
      const t = taskOf(context)
      const start = context.params.int("start") ?? 0
      const limit = context.params.int("limit") ?? 50
      const lines = t.log.map((text, i) => ({ n: i + 1, t: text }))
      const page = lines.slice(start, limit === 0 ? undefined : start + limit)
      return reply(lines.length === 0 ? [{ n: 1, t: "no content" }] : page, { total: Math.max(1, lines.length) })
    }
  }
]
