/**
 * One list of every CCI instance, shared by all CciInstance reconciles.
 *
 * Polling each bound instance's detail costs one call per object per poll; the paged
 * list costs one call per page (50 records) per poll, whatever the number of
 * objects. The controller factory owns one snapshot: the first reconcile after it
 * expired walks the list, reconciles arriving meanwhile wait for that same walk, and
 * every reconcile within the TTL reuses it. The TTL is a little shorter than the poll
 * interval, so each object's periodic reconcile sees data fetched since its previous
 * one (a remote change shows within one poll interval plus the TTL at worst). The walk
 * and its sharing are the service's {@link ListSnapshot} (as for NAS and tasks); here a
 * failed walk throws to its readers (the reconcile reports it) and is walked again by
 * the next reader.
 */
import { ListSnapshot, type ListSnapshotView } from "../../service/list-snapshot.js";
import type { PageWalkEnd } from "../../service/pagination.js";
import type { CciInstance } from "../../service/schemas/cci.js";

/** The walk of the list the snapshot needs (ServiceClient.iterateCci). */
export interface CciLister {
  iterateCci(): AsyncGenerator<CciInstance, PageWalkEnd, undefined>;
  /** The account the lister calls (ServiceClient.accountScope): one walk per account. */
  readonly accountScope?: object;
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

/** One account's walk, and the last view of it handed out. */
interface AccountList {
  list: ListSnapshot<CciInstance>;
  last?: { walk: ListSnapshotView<CciInstance>; view: CciListView };
}

/**
 * A list of every CCI instance, fetched at most once per TTL, per account: when the
 * lister is routed to the account of the object being reconciled (service connections),
 * each account has its own walk, so no object sees another account's instances. See
 * the module comment.
 */
export class CciSnapshot {
  private readonly accounts = new WeakMap<object, AccountList>();
  private readonly single: object = {};

  constructor(
    private readonly lister: CciLister,
    private readonly options: CciSnapshotOptions,
  ) {}

  /** The current view; walks the list when the last walk is older than the TTL. */
  async get(): Promise<CciListView> {
    const account = this.account();
    const walk = await account.list.readOrThrow(this.options.ttlMs);
    if (account.last?.walk !== walk) {
      const view = {
        byId: walk.records,
        fetchedAt: new Date(walk.fetchedAt),
        complete: walk.complete,
      };
      account.last = { walk, view };
    }
    return account.last.view;
  }

  /** Forgets the current view and a walk under way: the next {@link get} walks the list again. */
  invalidate(): void {
    this.account().list.invalidate();
  }

  /** The walk of the account the lister calls now. */
  private account(): AccountList {
    const scope = this.lister.accountScope ?? this.single;
    let account = this.accounts.get(scope);
    if (!account) {
      account = {
        list: new ListSnapshot(
          () => this.lister.iterateCci(),
          (cci) => cci.id,
          this.options.now,
        ),
      };
      this.accounts.set(scope, account);
    }
    return account;
  }
}
