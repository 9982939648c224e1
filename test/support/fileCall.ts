// A file or backup call named as the customer names it (method and sub-path below the server), turned into the
// operation the relay asks of the game panel, by the relay's own rule (domain/game/fileActions.ts).
import { fileAction } from "../../domain/game/fileActions.ts"
import type { FileCall } from "../../ports/GamePanel.ts"

export const fileCall = (method: string, path: string, query = "", body: FileCall["body"] = null): FileCall => {
  const action = fileAction(method, path)
  if (action?._tag !== "Relay") throw new Error(`${method} ${path} is not a relayed file call`)
  return { operation: action.operation, query, body }
}
