// Customers and operators of a test server: registered over HTTP, made support or admin as the CLI does
// (grantRole on the server's own database), each signed in from a browser of their own.
import { expect } from "vitest"
import type { StaffRole } from "../../domain/account/Role.ts"
import { grantRole } from "../../domain/account/StaffRoles.ts"
import { Browser } from "./browser.ts"
import type { startTestServer } from "./testServer.ts"

type Server = Awaited<ReturnType<typeof startTestServer>>

export const PASSWORD = "correct horse battery"
let seq = 0

export interface Person {
  readonly id: string
  readonly email: string
  /** A browser signed in as them. */
  readonly browser: Browser
}

/** Registers a personal account and signs it in; with `role`, makes it staff before signing in. */
export const person = async (
  server: Server,
  options: { readonly role?: StaffRole; readonly lastName?: string; readonly address?: string } = {}
): Promise<Person> => {
  const email = `${options.role ?? "customer"}.${++seq}.${Date.now()}@example.com`
  const registered = await new Browser(server.url).post("/api/auth/register", {
    email,
    password: PASSWORD,
    accountType: "personal",
    firstName: "Ada",
    lastName: options.lastName ?? "Lovelace"
  })
  expect(registered.status, registered.text).toBe(201)
  if (options.role !== undefined) await server.runtime.runPromise(grantRole(email, options.role))
  const browser = new Browser(server.url)
  const login = await browser.request("POST", "/api/auth/login", {
    json: { email, password: PASSWORD },
    ...(options.address === undefined ? {} : { headers: { "x-forwarded-for": options.address } })
  })
  expect(login.status, login.text).toBe(200)
  return { id: (registered.body as { user: { id: string } }).user.id, email, browser }
}
