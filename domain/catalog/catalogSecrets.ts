// Where the catalog's upstream credentials live among the sealed secrets, and how applying a file keeps them.
import { Effect, Option, Redacted } from "effect"
import { readSecret, storeSecret } from "../secrets/UpstreamCredentials.ts"

export const clusterSecretNames = (cluster: string) => ({
  password: `proxmox:${cluster}:password`,
  tokenSecret: `proxmox:${cluster}:token-secret`
})

export const panelSecretNames = (panel: string) => ({
  applicationKey: `pterodactyl:${panel}:application-key`,
  clientKey: `pterodactyl:${panel}:client-key`
})

/**
 * Stores `value` under `name` unless the stored one already opens to it (sealing again would change the stored
 * bytes, and applying a file twice must change nothing). Null keeps whatever is stored. True when it stored.
 */
export const syncSecret = (name: string, value: Redacted.Redacted<string> | null) => {
  if (value === null) return Effect.succeed(false)
  return readSecret(name).pipe(
    Effect.map(Option.some),
    Effect.catchTag(["SecretNotFound", "SecretUnreadable"], () => Effect.succeed(Option.none<Redacted.Redacted<string>>())),
    Effect.flatMap((current) =>
      Option.isSome(current) && Redacted.value(current.value) === Redacted.value(value)
        ? Effect.succeed(false)
        : Effect.as(storeSecret(name, value), true)
    ),
    // Names come from checked identifiers and the file refuses empty values: either failure is a bug.
    Effect.catchTag(["InvalidSecretName", "EmptySecret"], Effect.die)
  )
}
