// Builds what Virtualization tests need: a small lab cluster for the PVE simulation, cloud-init settings, and a
// terminal that reads a serial console as text.
import { Effect, Redacted, Ref, Stream } from "effect"
import type { ProxmoxSimulationOptions } from "../../adapters/proxmox/sandbox/ProxmoxSimulation.ts"
import type { CloudInit, SerialConsole, VmRef } from "../../ports/Virtualization.ts"

export const GiB = 1024 ** 3

/** The lab cluster's name, its Debian template on pve1 and the storage clones go to. */
export const labCluster = "lab"
export const labTemplate: VmRef = { cluster: labCluster, node: "pve1", vmid: 9000 }
export const labStorage = "local-lvm"

/**
 * Two nodes (pve1 holds the template, with a second storage `local`), one 3 GiB / 1 vCPU / 1 GiB template, plenty of
 * room unless told otherwise.
 */
export const labSeed = (options: { readonly storageBytes?: number } = {}): Pick<ProxmoxSimulationOptions, "nodes" | "templates"> => ({
  nodes: [
    {
      name: "pve1",
      cpus: 32,
      memoryBytes: 128 * GiB,
      storage: [{ id: labStorage, totalBytes: options.storageBytes ?? 2000 * GiB }, { id: "local", totalBytes: 100 * GiB }]
    },
    { name: "pve2", cpus: 16, memoryBytes: 64 * GiB, storage: [{ id: labStorage, totalBytes: 1000 * GiB }] }
  ],
  templates: [{ vmid: labTemplate.vmid, node: labTemplate.node, name: "debian-12-cloud", diskBytes: 3 * GiB }]
})

/** The ownership stamp tests give the VM called `hostname` (an order id in production). */
export const stampFor = (hostname: string) => `order-${hostname}`

/** Cloud-init settings for a VPS called `hostname`, changed only where a test says. */
export const cloudInit = (hostname: string, overrides: Partial<CloudInit> = {}): CloudInit => ({
  stamp: stampFor(hostname),
  cores: 2,
  memoryMiB: 2048,
  bridge: "vmbr0",
  address: "203.0.113.10/28",
  gateway: "203.0.113.1",
  nameservers: ["1.1.1.1", "9.9.9.9"],
  user: "root",
  password: Redacted.make(`pw-${hostname}`),
  sshPublicKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZha2Uta2V5LWZvci10ZXN0cw ada@example.com"],
  hostname,
  ...overrides
})

const encoder = new TextEncoder()

/**
 * A serial console read as text: `until(marker)` waits for the next `marker` and returns the text up to and including
 * it. It polls with `Effect.sleep`, so tests using it run on the live clock (`excludeTestServices`, `it.live`).
 */
export const terminal = (serial: SerialConsole) =>
  Effect.gen(function*() {
    const shown = yield* Ref.make("")
    const consumed = yield* Ref.make(0)
    const decoder = new TextDecoder()
    yield* serial.output.pipe(
      Stream.runForEach((bytes) => Ref.update(shown, (text) => text + decoder.decode(bytes, { stream: true }))),
      Effect.ignore,
      Effect.forkScoped
    )
    const until = (marker: string) =>
      Effect.gen(function*() {
        while (true) {
          const text = yield* Ref.get(shown)
          const from = yield* Ref.get(consumed)
          const at = text.indexOf(marker, from)
          if (at >= 0) {
            yield* Ref.set(consumed, at + marker.length)
            return text.slice(from, at + marker.length)
          }
          yield* Effect.sleep("5 millis")
        }
      }).pipe(Effect.timeoutOrElse({
        duration: "5 seconds",
        orElse: () =>
          Effect.flatMap(Ref.get(shown), (text) =>
            Effect.die(new Error(`no ${JSON.stringify(marker)} on the console; it showed ${JSON.stringify(text)}`)))
      }))
    return { until, type: (text: string) => serial.write(encoder.encode(text)) }
  })

export type Terminal = Effect.Success<ReturnType<typeof terminal>>

/** Enter, user, password: the getty dialogue of a serial console. */
export const logIn = (term: Terminal, user: string, password: string) =>
  Effect.gen(function*() {
    yield* term.type("\r")
    yield* term.until("login: ")
    yield* term.type(`${user}\r`)
    yield* term.until("Password: ")
    yield* term.type(`${password}\r`)
  })
