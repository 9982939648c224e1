// The customer notices in the running application: the app provides Notices, and what it sends reaches the Mailer
// the settings chose (here the sandbox outbox).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Notices } from "../../domain/notices/CustomerNotice.ts"
import { Users } from "../../ports/Users.ts"
import { startTestServer } from "../support/testServer.ts"
import { newUser } from "../support/userMother.ts"

let server: Awaited<ReturnType<typeof startTestServer>>
beforeAll(async () => {
  server = await startTestServer()
}, 60_000)
afterAll(() => server?.stop())

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean) => {
  for (let i = 0; i < 100; i++) {
    const value = await read()
    if (done(value)) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("did not happen within 5 s")
}

describe("customer notices in the app", () => {
  it("a notice sent twice reaches the outbox once, in the user's language", async () => {
    const user = newUser("notice-outbox@example.com", { language: "en", firstName: "Zoe" })
    await server.runtime.runPromise(Effect.flatMap(Users, (users) => users.insert(user)))
    const notice = {
      _tag: "ServiceReady" as const,
      userId: user.id,
      service: { subscriptionId: "sub-outbox", kind: "vps", planName: "VPS S" },
      address: "203.0.113.7"
    }
    await server.runtime.runPromise(Effect.flatMap(Notices, (notices) => Effect.all([notices.send(notice), notices.send(notice)])))
    const mails = await until(() => server.outbox(10), (all) => all.some((m) => m.to === user.email))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const ours = (await server.outbox(10)).filter((m) => m.to === user.email)
    expect(ours.map((m) => m.subject)).toEqual(["Your VPS S is ready"])
    expect(mails.find((m) => m.to === user.email)?.text).toContain("Address: 203.0.113.7")
  })
})
