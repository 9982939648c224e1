// A logger that keeps every line instead of printing it, for tests that specify what is logged (alerts).
import { Context, Effect, Layer, Logger } from "effect"

export interface LogLine {
  readonly level: string
  readonly text: string
}

export class CapturedLogs extends Context.Service<CapturedLogs, {
  readonly lines: Effect.Effect<ReadonlyArray<LogLine>>
}>()("test/CapturedLogs") {}

/** Replaces the loggers; provide it outside the layers whose fibers should log into it. */
export const capturedLogs = () => {
  const lines: Array<LogLine> = []
  const collector = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel, text: Array.isArray(message) ? message.map(String).join(" ") : String(message) })
  })
  return Layer.merge(Logger.layer([collector]), Layer.succeed(CapturedLogs, { lines: Effect.sync(() => [...lines]) }))
}

/** The Error-level lines starting with the alert prefix. */
export const alerts = Effect.map(Effect.flatMap(CapturedLogs, (c) => c.lines), (lines) =>
  lines.filter((l) => l.level === "Error" && l.text.startsWith("ALERT ")).map((l) => l.text))
