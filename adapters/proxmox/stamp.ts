// Our ownership stamp as PVE holds it: a tag `zh-order-<order id>` (shown in the UI and in /cluster/resources) and a
// line `zh-order: <order id>` in the VM's description (set by the clone call itself, so a VM carries it from its
// first moment; tags are not a clone parameter). Tags are a `pve-tag-list` (reference/proxmox.md §3.5): each tag
// matches `[a-z0-9_][a-z0-9_\-+.]*`, the list is split on `;`, `,` or spaces.

const TAG_PREFIX = "zh-order-"
const DESCRIPTION_LINE = /^zh-order: (\S+)$/m

/** What our tag list is: `zh` (to find our VMs at a glance) and the order's own tag. */
export const stampTags = (orderId: string) => `zh;${TAG_PREFIX}${orderId}`

export const stampDescription = (orderId: string) =>
  `Managed by ZH hosting for one customer's VPS: do not edit, move or delete it here.\nzh-order: ${orderId}`

/** The order a tag list names (a cluster listing has tags, not descriptions). */
export const stampOfTags = (tags: string | null | undefined): string | null => {
  for (const tag of (tags ?? "").split(/[;,\s]+/)) {
    if (tag.toLowerCase().startsWith(TAG_PREFIX) && tag.length > TAG_PREFIX.length) return tag.slice(TAG_PREFIX.length)
  }
  return null
}

/** The order a VM's tags name; the description's line when the tags carry none (a clone not configured yet). */
export const stampOf = (tags: string | null | undefined, description: string | null | undefined): string | null =>
  stampOfTags(tags) ?? DESCRIPTION_LINE.exec(description ?? "")?.[1] ?? null
