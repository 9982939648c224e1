// The contract of a customer's game servers: list, read, power, and the console token of the specification's
// `GET /api/client/servers/:id/websocket` (whose `socket` is our own WebSocket, never a node's).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./AccountsApi.ts"
import { BadRequest, Conflict, NotFound, ServiceUnavailable, TooManyRequests, Unprocessable } from "./ApiErrors.ts"
import { missingAnswers } from "./errorMapping.ts"
import { MissingAnswer, PathId, ServerIdentifier } from "./inputs.ts"
import { GameServerView } from "./views.ts"

const upstream = [ServiceUnavailable, Conflict, NotFound, TooManyRequests] as const

export class GameServersApi extends HttpApiGroup.make("gameServers")
  .add(
    HttpApiEndpoint.get("list", "/", { success: Schema.Struct({ gameServers: Schema.Array(GameServerView) }) }),
    HttpApiEndpoint.get("get", "/:id", { params: { id: PathId }, success: Schema.Struct({ gameServer: GameServerView }), error: NotFound }),
    HttpApiEndpoint.post("power", "/:id/power", {
      params: { id: PathId },
      payload: Schema.Struct({ signal: Schema.Literals(["start", "stop", "restart", "kill"]) }),
      success: HttpApiSchema.NoContent,
      error: [...upstream, BadRequest, Unprocessable]
    })
  )
  .middleware(Authentication)
  .annotate(MissingAnswer, missingAnswers.gameServer)
  .prefix("/api/game-servers")
  .annotateMerge(OpenApi.annotations({ title: "Game servers", description: "Your game servers and their power" }))
{}

export class GameClientApi extends HttpApiGroup.make("gameClient")
  .add(
    HttpApiEndpoint.get("websocket", "/:id/websocket", {
      params: { id: ServerIdentifier },
      success: Schema.Struct({
        data: Schema.Struct({
          /** Ours: short-lived, bound to you and this server. Send it as `{"event":"auth","args":[token]}`. */
          token: Schema.String,
          /** Our WebSocket, speaking the Wings event protocol. */
          socket: Schema.String
        })
      }),
      error: upstream
    })
  )
  .middleware(Authentication)
  .annotate(MissingAnswer, missingAnswers.gameServer)
  .prefix("/api/client/servers")
  .annotateMerge(OpenApi.annotations({
    title: "Game server console and files",
    description:
      "The console token (`:id` = the server identifier). Files and backups: the panel's Client API relayed under " +
      "/api/client/servers/:id/files/… and /api/client/servers/:id/backups/… (list, contents, write, rename, copy, " +
      "delete, create-folder, compress, decompress, chmod, download, upload; backups list, create, get, lock, " +
      "restore, delete, download); downloads and uploads stream through …/files/download/stream?file=, " +
      "…/files/upload/stream?directory= (multipart, parts named `files`) and …/backups/:uuid/download/stream."
  }))
{}
