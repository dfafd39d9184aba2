/**
 * One list of every CCI instance per account, shared by all CciInstance reconciles: one
 * call per page per poll instead of one detail read per object. The service's
 * {@link ListSnapshot} walks it; reconciles arriving during a walk wait for it, and
 * those within the TTL (a little shorter than the poll interval, so each periodic
 * reconcile sees data fetched since its previous one) reuse it. A failed walk throws to
 * its readers and is walked again by the next one.
 */
import { ListSnapshot, type ListSnapshotView } from "../../service/list-snapshot.js";
import type { PageWalkEnd } from "../../service/pagination.js";
import type { CciErrorDetails, CciInstance } from "../../service/schemas/cci.js";
import type { ImageSaver } from "./image-saver.js";

/** The walk of the list the snapshot needs (`CciOperations.iterate`, service/kinds/cciinstance.ts). */
export interface CciLister {
  iterate(): AsyncGenerator<CciInstance, PageWalkEnd, undefined>;
}

/** Every listed instance, by id, and when the walk started. */
export interface CciListView {
  byId: ReadonlyMap<string, CciInstance>;
  /** Start of the walk: every record reflects the service at or after this time. */
  fetchedAt: Date;
  /** Whether the walk reached the end of the list (see `PageWalkEnd`). */
  complete: boolean;
}

/** Options of {@link CciSnapshot}. */
export interface CciSnapshotOptions {
  /** How long a walk is reused. */
  ttlMs: number;
  /** Time source (ms since the epoch). */
  now: () => number;
}

/**
 * A list of every CCI instance of one account, fetched at most once per TTL. See the
 * module comment.
 */
export class CciSnapshot {
  private readonly list: ListSnapshot<CciInstance>;
  private readonly ttlMs: number;
  private last?: { walk: ListSnapshotView<CciInstance>; view: CciListView };

  constructor(options: CciSnapshotOptions) {
    this.list = new ListSnapshot<CciInstance>((cci) => cci.id, options.now);
    this.ttlMs = options.ttlMs;
  }

  /**
   * The current view; walks the list through `lister` (the account's client of the
   * reconcile asking) when the last walk is older than the TTL.
   */
  async get(lister: CciLister): Promise<CciListView> {
    const walk = await this.list.readOrThrow(this.ttlMs, () => lister.iterate());
    if (this.last?.walk !== walk) {
      const view = {
        byId: walk.records,
        fetchedAt: new Date(walk.fetchedAt),
        complete: walk.complete,
      };
      this.last = { walk, view };
    }
    return this.last.view;
  }

  /** Forgets the current view and a walk under way: the next {@link get} walks the list again. */
  invalidate(): void {
    this.list.invalidate();
  }
}

/** The service operations the reconciler uses (`CciOperations`, service/kinds/cciinstance.ts). */
export interface CciService extends ImageSaver {
  get(id: string): Promise<CciInstance>;
  errorDetails(id: string): Promise<CciErrorDetails>;
}

/**
 * The account of an object: its CCI operations for one reconcile (the account's calls,
 * made under that reconcile's context), and that account's list snapshot.
 */
export interface CciAccount {
  service: CciService & CciLister;
  snapshot: CciSnapshot;
}
