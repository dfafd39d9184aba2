/**
 * One list of every CCI instance, shared by all CciInstance reconciles.
 *
 * Polling each bound instance's detail costs one call per object per poll; the paged
 * list costs one call per page (50 records) per poll, whatever the number of
 * objects. The controller factory owns one snapshot: the first reconcile after it
 * expired walks the list, reconciles arriving meanwhile wait for that same walk, and
 * every reconcile within the TTL reuses it. The TTL is a little shorter than the poll
 * interval, so each object's periodic reconcile sees data fetched since its previous
 * one (a remote change shows within one poll interval plus the TTL at worst).
 */
import type { CciInstance } from "../../service/schemas/cci.js";

/** The walk of the list the snapshot needs (ServiceClient.iterateCci). */
export interface CciLister {
  iterateCci(): AsyncIterable<CciInstance>;
}

/** Every listed instance, by id, and when the walk started. */
export interface CciListView {
  byId: ReadonlyMap<string, CciInstance>;
  /** Start of the walk: every record reflects the service at or after this time. */
  fetchedAt: Date;
}

/** Options of {@link CciSnapshot}. */
export interface CciSnapshotOptions {
  /** How long a walk is reused. */
  ttlMs: number;
  /** Time source (ms since the epoch). */
  now: () => number;
}

/** A list of every CCI instance, fetched at most once per TTL. See the module comment. */
export class CciSnapshot {
  private current?: { view: CciListView; at: number };
  private inflight?: Promise<CciListView>;

  constructor(
    private readonly lister: CciLister,
    private readonly options: CciSnapshotOptions,
  ) {}

  /** The current view; walks the list when the last walk is older than the TTL. */
  get(): Promise<CciListView> {
    const now = this.options.now();
    if (this.current && now - this.current.at < this.options.ttlMs) {
      return Promise.resolve(this.current.view);
    }
    if (!this.inflight) {
      this.inflight = this.walk(now).finally(() => {
        this.inflight = undefined;
      });
    }
    return this.inflight;
  }

  /** Forgets the current view: the next {@link get} walks the list again. */
  invalidate(): void {
    this.current = undefined;
  }

  private async walk(startedAt: number): Promise<CciListView> {
    const byId = new Map<string, CciInstance>();
    for await (const record of this.lister.iterateCci()) byId.set(record.id, record);
    const view = { byId, fetchedAt: new Date(startedAt) };
    this.current = { view, at: startedAt };
    return view;
  }
}
