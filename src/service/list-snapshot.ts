/**
 * One walk of a kind's paged list, shared by every object of the kind: the records by
 * id with the time the walk started. A settled object's routine poll reads its record
 * here instead of calling the detail read, so an idle fleet costs one list walk (N /
 * page size calls) per poll interval instead of N detail reads. Readers that arrive
 * while a walk is under way wait for it (one walk at a time) when it is recent enough
 * for them; a failed walk is not repeated before the asked age has passed, so a broken
 * list costs each reader its fallback (the detail read) and not a list walk on top.
 *
 * The snapshot is shared by every piece of work on one account (`ServiceAccount.withCall`),
 * so each reader hands the walk it would start: a walk is made by the reader that
 * starts it, under that reader's call context, and the others wait for it.
 */
import { type ListedIds, listRecords, type PageWalkEnd } from "./pagination.js";

/** One complete or partial walk of the list. */
export interface ListSnapshotView<R> {
  /** The records the walk saw, by id. */
  records: ReadonlyMap<string, R>;
  /** When the walk started (ms since the epoch): its records are at least this recent. */
  fetchedAt: number;
  /** Whether the walk reached the end of the list (see `PageWalkEnd`). */
  complete: boolean;
}

/** The ids a view lists, and whether its walk was complete. */
export function listedIds<R>(view: ListSnapshotView<R>): ListedIds {
  return { ids: new Set(view.records.keys()), complete: view.complete };
}

/**
 * `view` with each record passed through `complete` as it is read (e.g. filled with what
 * the list leaves out), without copying the records.
 */
export function completedView<R>(
  view: ListSnapshotView<R>,
  complete: (record: R) => R,
): ListSnapshotView<R> {
  return { ...view, records: new CompletedRecords(view.records, complete) };
}

/** The records of a view, each passed through `complete` as it is read. */
class CompletedRecords<R> implements ReadonlyMap<string, R> {
  constructor(
    private readonly records: ReadonlyMap<string, R>,
    private readonly complete: (record: R) => R,
  ) {}

  get size(): number {
    return this.records.size;
  }

  get(id: string): R | undefined {
    const record = this.records.get(id);
    return record === undefined ? undefined : this.complete(record);
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  keys(): MapIterator<string> {
    return this.records.keys();
  }

  *values(): MapIterator<R> {
    for (const record of this.records.values()) yield this.complete(record);
  }

  *entries(): MapIterator<[string, R]> {
    for (const [id, record] of this.records) yield [id, this.complete(record)];
  }

  [Symbol.iterator](): MapIterator<[string, R]> {
    return this.entries();
  }

  forEach(each: (record: R, id: string, map: ReadonlyMap<string, R>) => void): void {
    for (const [id, record] of this.entries()) each(record, id, this);
  }
}

/** A walk under way, and when it started. */
interface Walk<R> {
  startedAt: number;
  done: Promise<ListSnapshotView<R> | undefined>;
}

/** A walk of the whole list, started by one reader. */
export type ListWalk<R> = () => AsyncGenerator<R, PageWalkEnd, undefined>;

/** A snapshot of one paged list, refreshed on demand when older than the asked age. */
export class ListSnapshot<R> {
  private view: ListSnapshotView<R> | undefined;
  /** When the last walk that failed started, unless a walk succeeded since. */
  private failedAt: number | undefined;
  /** The error of the last walk that failed. */
  private lastError: unknown;
  private walking: Walk<R> | undefined;
  /** Bumped by `invalidate`: a walk started before it does not become the snapshot. */
  private generation = 0;
  /** Walks started so far (for tests and metrics). */
  walks = 0;

  /** `identity` names a record; `now` is the clock (ms since the epoch). */
  constructor(
    private readonly identity: (record: R) => string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A snapshot fetched less than `maxAgeMs` ago, walking the list anew when the last one
   * is older (with `walk`); undefined when the walk fails (or failed less than
   * `maxAgeMs` ago).
   */
  read(maxAgeMs: number, walk: ListWalk<R>): Promise<ListSnapshotView<R> | undefined> {
    return this.readSince(this.now() - maxAgeMs + 1, walk);
  }

  /**
   * A snapshot whose walk started at `since` or later (ms since the epoch), e.g. one that
   * certainly reflects the service after a failed detail read; a walk under way that
   * started earlier is waited for, then another is started. Undefined when the walk
   * fails (or failed at `since` or later).
   */
  async readSince(since: number, walk: ListWalk<R>): Promise<ListSnapshotView<R> | undefined> {
    for (;;) {
      if (this.view && this.view.fetchedAt >= since) return this.view;
      const walking = this.walking;
      if (walking) {
        const view = await walking.done;
        if (walking.startedAt >= since) return view;
        continue;
      }
      if (this.failedAt !== undefined && this.failedAt >= since) return undefined;
      return this.start(walk).done;
    }
  }

  /**
   * Like {@link read}, but a failed walk throws its error instead of answering
   * undefined, and is walked again by the next reader (for readers that have no
   * fallback and report the error, e.g. CciInstance).
   */
  async readOrThrow(maxAgeMs: number, walk: ListWalk<R>): Promise<ListSnapshotView<R>> {
    this.failedAt = undefined;
    const view = await this.read(maxAgeMs, walk);
    if (view) return view;
    throw this.lastError;
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

  private start(walk: ListWalk<R>): Walk<R> {
    const startedAt = this.now();
    const running: Walk<R> = {
      startedAt,
      done: this.refresh(startedAt, walk).finally(() => {
        if (this.walking === running) this.walking = undefined;
      }),
    };
    this.walking = running;
    return running;
  }

  private async refresh(
    fetchedAt: number,
    walk: ListWalk<R>,
  ): Promise<ListSnapshotView<R> | undefined> {
    const generation = this.generation;
    this.walks++;
    try {
      const { records, complete } = await listRecords(walk(), this.identity);
      const view = { records, fetchedAt, complete };
      if (generation === this.generation) {
        this.view = view;
        this.failedAt = undefined;
      }
      return view;
    } catch (error) {
      // The readers fall back to their detail reads, which report the error.
      this.lastError = error;
      if (generation === this.generation) {
        this.view = undefined;
        this.failedAt = fetchedAt;
      }
      return undefined;
    }
  }
}
