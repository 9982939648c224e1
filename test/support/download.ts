// A download's body (ports/GamePanel.ts `Download.body`) read to its end, for tests that compare whole files.
import { Effect } from "effect"

/** Every byte of `body`; a body that fails part-way fails this with its error. */
export const readBody = (body: AsyncIterable<Uint8Array>) =>
  Effect.tryPromise({
    try: async () => {
      const parts: Array<Uint8Array> = []
      for await (const part of body) parts.push(part)
      return Buffer.concat(parts)
    },
    catch: (error) => error
  })
