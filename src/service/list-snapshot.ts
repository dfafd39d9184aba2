/**
 * One walk of a kind's paged list, shared by every object of the kind: the records by
 * id with the time the walk started. A settled object's routine poll reads its record
 * here instead of calling the detail read, so an idle fleet costs one list walk (N /
 * page size calls) per poll interval instead of N detail reads. Readers that arrive
 * while a walk is under way wait for it (one walk at a time); a failed walk is not
 * repeated before the asked age has passed, so a broken list costs each reader its
 * fallback (the detail read) and not a list walk on top.
 */
import { listRecords, type PageWalkEnd } from "./pagination.js";

/** One complete or partial walk of the list. */
export interface ListSnapshotView<R> {
  /** The records the walk saw, by id. */
  records: ReadonlyMap<string, R>;
  /** When the walk started (ms since the epoch): its records are at least this recent. */
  fetchedAt: number;
  /** Whether the walk reached the end of the list (see `PageWalkEnd`). */
  complete: boolean;
}

/** A snapshot of one paged list, refreshed on demand when older than the asked age. */
export class ListSnapshot<R> {
  private view: ListSnapshotView<R> | undefined;
  private failedAt: number | undefined;
  private walking: Promise<ListSnapshotView<R> | undefined> | undefined;
  /** Bumped by `invalidate`: a walk started before it does not become the snapshot. */
  private generation = 0;
  /** Walks started so far (for tests and metrics). */
  walks = 0;

  /**
   * `walk` starts a walk of the whole list; `identity` names a record; `now` is the
   * clock (ms since the epoch).
   */
  constructor(
    private readonly walk: () => AsyncGenerator<R, PageWalkEnd, undefined>,
    private readonly identity: (record: R) => string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A snapshot fetched less than `maxAgeMs` ago, walking the list anew when the last one
   * is older; undefined when the walk fails (or failed less than `maxAgeMs` ago).
   */
  async read(maxAgeMs: number): Promise<ListSnapshotView<R> | undefined> {
    const now = this.now();
    if (this.view && now - this.view.fetchedAt < maxAgeMs) return this.view;
    if (this.walking) return this.walking;
    if (this.failedAt !== undefined && now - this.failedAt < maxAgeMs) return undefined;
    const walking = this.refresh().finally(() => {
      if (this.walking === walking) this.walking = undefined;
    });
    this.walking = walking;
    return walking;
  }

  /**
   * Drops the snapshot, and the result of a walk under way (e.g. after a change made by
   * the operator itself, which an older walk would not show).
   */
  invalidate(): void {
    this.generation++;
    this.view = undefined;
    this.failedAt = undefined;
    this.walking = undefined;
  }

  private async refresh(): Promise<ListSnapshotView<R> | undefined> {
    const fetchedAt = this.now();
    const generation = this.generation;
    this.walks++;
    try {
      const { records, complete } = await listRecords(this.walk(), this.identity);
      const view = { records, fetchedAt, complete };
      if (generation === this.generation) {
        this.view = view;
        this.failedAt = undefined;
      }
      return view;
    } catch {
      // The readers fall back to their detail reads, which report the error.
      if (generation === this.generation) {
        this.view = undefined;
        this.failedAt = fetchedAt;
      }
      return undefined;
    }
  }
}
