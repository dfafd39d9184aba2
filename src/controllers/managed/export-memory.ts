/**
 * What the export step (export.ts) remembers of the ConfigMaps and Secrets it wrote:
 * their last content per object, and when each was last read back as written.
 */
import { isDeepStrictEqual } from "node:util";

/** What a ConfigMap written by the export step is: name, owner, data. */
export interface Written {
  name: string;
  data: Record<string, string>;
}

/** The memory key of the Secret of `uid` (its ConfigMap's is `uid`). */
export const secretKeyOf = (uid: string) => `${uid}/secret`;

/**
 * A written export is read back (ConfigMaps and Secrets are not watched) at most once
 * per this many poll intervals, and at a reconcile the user asks for.
 */
export const EXPORT_RECHECK_POLLS = 20;

/**
 * The last export of each object (by uid) this process wrote, and when it was last
 * seen as written: one deleted or edited by hand is found at most `recheckMs` later.
 */
export class ExportMemory {
  private readonly last = new Map<string, Written>();
  private readonly seenAt = new Map<string, number>();

  constructor(
    private readonly recheckMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `w` is what was last written for `uid`. */
  same(uid: string, w: Written): boolean {
    return isDeepStrictEqual(this.last.get(uid), w);
  }

  /** Notes `w` as written for `uid` (and so seen now). */
  record(uid: string, w: Written): void {
    this.last.set(uid, w);
    this.seen(uid);
  }

  /** Whether what was written under `key` is due a read: not seen for `recheckMs`. */
  due(key: string): boolean {
    const at = this.seenAt.get(key);
    return at === undefined || this.now() - at >= this.recheckMs;
  }

  /** Notes that what was written under `key` was read back as written now. */
  seen(key: string): void {
    this.seenAt.set(key, this.now());
  }

  /** Makes the exports of `uid` due a read at its next export (a reconcile asked for). */
  recheck(uid: string): void {
    this.seenAt.delete(uid);
    this.seenAt.delete(secretKeyOf(uid));
  }

  /** Forgets what was written under `key` alone. */
  forgetKey(key: string): void {
    this.last.delete(key);
    this.seenAt.delete(key);
  }

  /** Forgets `uid` (its object is gone). */
  forget(uid: string): void {
    this.forgetKey(uid);
    this.forgetKey(secretKeyOf(uid));
  }
}
