/**
 * Shards (Flux's convention): an operator started with `shardKey` reconciles only the
 * objects labelled `aidc.io/shard=<key>`; the unsharded one those without the label.
 * Each elects its leader on its own Lease.
 */

/** The label that assigns an object to a shard. */
export const SHARD_LABEL = "aidc.io/shard";

/** The label selector of the objects a shard (or the unsharded operator) reconciles. */
export function shardSelector(shardKey: string | undefined): string {
  return shardKey ? `${SHARD_LABEL}=${shardKey}` : `!${SHARD_LABEL}`;
}

/** The Lease a shard elects its leader on: the configured name, suffixed by the shard. */
export function shardLeaseName(leaseName: string, shardKey: string | undefined): string {
  return shardKey ? `${leaseName}-${shardKey}` : leaseName;
}
