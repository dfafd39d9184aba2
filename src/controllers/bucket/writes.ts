/**
 * What the object storage did with each feature a Bucket wrote at one generation, so
 * that a write the server will not take is not sent again every poll: one answered
 * NotImplemented (a server may read a feature as empty and refuse to set it) is held
 * until the spec changes (a new generation) or {@link REWRITE_AFTER_MS} has passed,
 * when it is sent once more to look again.
 */
import type { Bucket } from "../../crds/bucket.js";
import type { ManagedCall } from "../managed/call.js";
import type { FeatureName } from "./features.js";

/** How long a write the server refused is held at one generation. */
export const REWRITE_AFTER_MS = 60 * 60_000;

/** The most buckets whose writes are remembered (the oldest forgotten first). */
const WRITES_MAX = 10_000;

/** Why a change is not sent: the server refused it. */
export type Held = "NotImplemented";

interface Written {
  generation: number;
  /** When it was sent (ms since the epoch). */
  at: number;
  refused: boolean;
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

  /** The write log of `call`'s reconcile. */
  log(call: ManagedCall<Bucket>): WriteLog {
    const uid = call.obj.metadata.uid ?? "";
    const generation = call.obj.metadata.generation ?? 0;
    const now = call.now().getTime();
    const last = (f: FeatureName) => {
      const w = this.byUid.get(uid)?.get(f);
      return w?.generation === generation ? w : undefined;
    };
    const fresh = (w: Written) => now - w.at < REWRITE_AFTER_MS;
    return {
      held: (f) => {
        const w = last(f);
        if (!w || !fresh(w)) return undefined;
        return w.refused ? "NotImplemented" : undefined;
      },
      rechecks: (f) => {
        const w = last(f);
        return w?.refused === true && !fresh(w);
      },
      wrote: (f, refused) => {
        const writes = this.byUid.get(uid) ?? new Map<FeatureName, Written>();
        this.byUid.delete(uid);
        this.byUid.set(uid, writes);
        writes.set(f, { generation, at: now, refused });
        for (const oldest of this.byUid.keys()) {
          if (this.byUid.size <= WRITES_MAX) break;
          this.byUid.delete(oldest);
        }
      },
    };
  }

  /** Forgets the writes of `obj`'s bucket (read as its spec says). */
  forget(obj: Bucket): void {
    this.byUid.delete(obj.metadata.uid ?? "");
  }
}
