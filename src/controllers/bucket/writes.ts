/**
 * What the object storage did with each feature a Bucket wrote at one generation, so
 * that a write the server will not take is not sent again every poll: one answered
 * NotImplemented (a server may read a feature as empty and refuse to set it), and one
 * it accepted yet does not show as written at the next reconcile (it does not keep a
 * field: Garage drops a lifecycle rule's noncurrentVersionExpirationDays), as long as it
 * answers the same. Either is held until the spec changes (a new generation) or
 * {@link REWRITE_AFTER_MS} has passed, when it is sent once more to look again (so is
 * one a restarted process does not remember, which Synced shows); a feature changed
 * otherwise since is written again (drift).
 */

import type { Bucket } from "../../crds/bucket.js";
import { noteNewest } from "../../runtime/newest-first.js";
import type { ManagedCall } from "../managed/call.js";
import { canonicalText, type FeatureName, OWNER_TAG } from "./features.js";

/** How long a write the server refused or did not keep is held at one generation. */
export const REWRITE_AFTER_MS = 60 * 60_000;

/** The most buckets whose writes are remembered (the oldest forgotten first). */
const WRITES_MAX = 10_000;

/** Why a change is not sent: the server refused it, or did not keep it. */
export type Held = "NotImplemented" | "NotKept";

interface Written {
  generation: number;
  /** When it was sent (ms since the epoch). */
  at: number;
  refused: boolean;
  /** The reconcile that sent it: the read right after a write does not judge it. */
  reconcile: number;
  /** The feature as the first later reconcile read it (canonicalText). */
  after?: string;
}

/** The writes of one reconcile of one bucket (external.ts update → changes.ts applyChanges). */
export interface WriteLog {
  held(feature: FeatureName): Held | undefined;
  /** Whether a change of `feature` sent now looks again at a held write (not drift). */
  rechecks(feature: FeatureName): boolean;
  wrote(feature: FeatureName, refused: boolean): void;
}

/** By object uid, the last write of each feature (see the module comment). */
export class FeatureWrites {
  private readonly byUid = new Map<string, Map<FeatureName, Written>>();
  private readonly reconciles = new WeakMap<object, number>();
  private count = 0;

  /** The write log of `call`'s reconcile, whose read found each feature as `remote` has it. */
  log(call: ManagedCall<Bucket>, remote: Partial<Record<FeatureName, unknown>>): WriteLog {
    const uid = call.obj.metadata.uid ?? "";
    const generation = call.obj.metadata.generation ?? 0;
    const now = call.now().getTime();
    const reconcile = this.reconcileOf(call);
    const last = (f: FeatureName) => {
      const w = this.byUid.get(uid)?.get(f);
      return w?.generation === generation ? w : undefined;
    };
    const fresh = (w: Written) => now - w.at < REWRITE_AFTER_MS;
    // A write this process does not remember (it started since) that Synced says, at this
    // generation, the server did not keep: sent again, it looks again.
    const synced = call.obj.status?.conditions?.find((c) => c.type === "Synced");
    const saidNotKept = (f: FeatureName) =>
      synced?.reason === "FieldNotKept" &&
      synced.observedGeneration === generation &&
      (synced.message.includes(`spec.${SPEC_FIELDS[f]}`) ||
        (f === "tags" && synced.message.includes("the owner mark")));
    return {
      held: (f) => {
        const w = last(f);
        if (!w || !fresh(w)) return undefined;
        if (w.refused) return "NotImplemented";
        if (w.reconcile === reconcile) return undefined;
        const now = canonicalText(remote[f]);
        w.after ??= now;
        return w.after === now ? "NotKept" : undefined;
      },
      rechecks: (f) => {
        const w = last(f);
        return w ? !fresh(w) : saidNotKept(f);
      },
      wrote: (f, refused) => {
        const writes = this.byUid.get(uid) ?? new Map<FeatureName, Written>();
        noteNewest(this.byUid, uid, writes, WRITES_MAX);
        writes.set(f, { generation, at: now, refused, reconcile });
      },
    };
  }

  /** Forgets the writes of `obj`'s bucket (read as its spec says). */
  forget(obj: Bucket): void {
    this.byUid.delete(obj.metadata.uid ?? "");
  }

  private reconcileOf(call: object): number {
    let id = this.reconciles.get(call);
    if (id === undefined) {
      id = ++this.count;
      this.reconciles.set(call, id);
    }
    return id;
  }
}

/** The spec field of each feature. */
const SPEC_FIELDS: Record<FeatureName, string> = {
  versioning: "versioning",
  lifecycle: "lifecycleRules",
  policy: "policy",
  tags: "tags",
  cors: "cors",
};

/**
 * The spec fields of a change of `feature` whose value `remote` does not show as
 * `desired` has it (what a server that does not keep them dropped), e.g.
 * `spec.lifecycleRules[0].noncurrentVersionExpirationDays`; rules are matched by id.
 */
export function unkeptFields(feature: FeatureName, desired: unknown, remote: unknown): string[] {
  const path = SPEC_FIELDS[feature];
  if (feature === "versioning" || feature === "policy") return [`spec.${path}`];
  if (feature === "tags") {
    const want = (desired ?? {}) as Record<string, string>;
    const has = (remote ?? {}) as Record<string, string>;
    return Object.keys(want)
      .filter((k) => has[k] !== want[k])
      .map((k) => (k === OWNER_TAG ? `the owner mark (tag ${k})` : `spec.tags.${k}`));
  }
  const want = (Array.isArray(desired) ? desired : []) as Record<string, unknown>[];
  const has = (Array.isArray(remote) ? remote : []) as Record<string, unknown>[];
  return want.flatMap((rule, i) => {
    const match = has.find((r) => rule.id !== undefined && r.id === rule.id) ?? has[i];
    if (!match) return [`spec.${path}[${i}]`];
    return Object.keys(rule)
      .filter((k) => canonicalText(rule[k]) !== canonicalText(match[k]))
      .map((k) => `spec.${path}[${i}].${k}`);
  });
}

/** What Synced says of the `fields` a server did not keep (FieldNotKept). */
export function notKeptMessage(fields: readonly string[]): string {
  const them = fields.length === 1 ? "it" : "them";
  return `the object storage accepted the write of ${fields.join(", ")} but does not show ${them} at the next poll (it does not keep ${them}, or something changes ${them} back): not written again until the spec changes or an hour has passed; remove ${them} from the spec (no effect on this server) or use a server that keeps ${them}`;
}
