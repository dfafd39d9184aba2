/**
 * The paged list of one kind's remote records as its operations module reads it
 * (src/service/kinds/<kind>.ts): one page, the walk of every page, the walk shared by
 * every object of the kind (list-snapshot.ts) and the ids it lists. A `KindList` is
 * made per piece of work on an account (`ServiceAccount.withCall`); its snapshot and the
 * details its records' detail reads showed (list-details.ts) live in the account's
 * {@link KindListStore}, shared by every view.
 */
import type { z } from "zod";
import { ListDetails } from "./list-details.js";
import { ListSnapshot, type ListSnapshotView, listedIds } from "./list-snapshot.js";
import type {
  KindListState,
  KindListStore,
  OperationArgs,
  OperationCaller,
} from "./operation-caller.js";
import { type ListedIds, type PageWalkEnd, paginate } from "./pagination.js";
import { type Page, pageOf } from "./schemas/data.js";

/** The query every list takes: the page, and filters of its own. */
export interface PageQuery {
  pageNo?: number;
  pageSize?: number;
}

/** What a kind's list is read with. */
export interface KindListOptions<R> {
  /** The list operation of the endpoint table. */
  operation: string;
  /** One record of the list. */
  record: z.ZodType<R>;
  /** A record's id. */
  id: (record: R) => string;
  /** The clock of the snapshot (ms since the epoch). */
  now: () => number;
  /** Whether the service is known to lack `operation` (a bare 404/405 was its answer). */
  knownMissing: (operation: string) => boolean;
  /** The account's list states, shared by every piece of work on it. */
  states: KindListStore;
}

/** One kind's paged list, called through `caller`. */
export class KindList<R, Q extends PageQuery> {
  private readonly snapshot: ListSnapshot<R>;
  private readonly pageSchema: z.ZodType<Page<R>>;
  /** The account's `KindListState.details` of this list. */
  readonly details: ListDetails<R>;

  constructor(
    private readonly caller: OperationCaller,
    private readonly options: KindListOptions<R>,
  ) {
    const state = options.states.of(options.operation, options.record, options.id);
    this.snapshot = state.snapshot;
    this.pageSchema = state.pageSchema;
    this.details = state.details;
  }

  /** A walk of the whole list through this view's caller. */
  private readonly walk = () => this.iterate({} as Omit<Q, "pageNo">);

  /** Whether the list operation is enabled in the endpoint table. */
  get enabled(): boolean {
    return this.caller.operationState(this.options.operation) !== "disabled";
  }

  /** One page of the list. */
  page(query: Q): Promise<Page<R>> {
    const q: OperationArgs["query"] = { ...(query as object) };
    return this.caller.request(this.options.operation, { query: q }, this.pageSchema);
  }

  /**
   * Every record matching `query`, page by page (the walk returns whether it was
   * complete); a complete walk of the whole list prunes the `details`.
   */
  iterate(query: Omit<Q, "pageNo">): AsyncGenerator<R, PageWalkEnd, undefined> {
    const walk = paginate(
      (pageNo, pageSize) => this.page({ ...query, pageNo, pageSize } as Q),
      this.options.id,
      query.pageSize,
    );
    const filtered = Object.entries(query).some(([k, v]) => k !== "pageSize" && v !== undefined);
    return filtered ? walk : this.pruning(walk);
  }

  /** `walk`, of the whole list, forgetting the `details` of the records it no longer shows once complete. */
  private async *pruning(
    walk: AsyncGenerator<R, PageWalkEnd, undefined>,
  ): AsyncGenerator<R, PageWalkEnd, undefined> {
    const mark = this.details.mark();
    if (mark === undefined) return yield* walk;
    const listed = new Set<string>();
    for (;;) {
      const next = await walk.next();
      if (next.done) {
        if (next.value.complete) this.details.prune(mark, listed);
        return next.value;
      }
      listed.add(this.options.id(next.value));
      yield next.value;
    }
  }

  /**
   * Keeps `fields` of record `id` as its detail read showed them (`details`), unless the
   * list is disabled or known to be missing: no walk would then use or prune them.
   */
  keepDetail(id: string, fields: Partial<R>): void {
    if (!this.enabled || this.options.knownMissing(this.options.operation)) return;
    this.details.keep(id, fields);
  }

  /**
   * The ids of every record from a walk of the whole list that started now or later
   * (shared with every caller that asks meanwhile), and whether the walk was complete
   * (see `PageWalkEnd`); undefined when the list is disabled or the walk failed.
   */
  async ids(): Promise<ListedIds | undefined> {
    if (!this.enabled) return undefined;
    const view = await this.snapshot.readSince(this.options.now(), this.walk);
    return view && listedIds(view);
  }

  /**
   * The whole list by id, walked anew when the last walk is `maxAgeMs` old or more and
   * shared by every caller; undefined when the list is disabled, known to be missing,
   * or its walk failed.
   */
  async read(maxAgeMs: number): Promise<ListSnapshotView<R> | undefined> {
    if (!this.enabled || this.options.knownMissing(this.options.operation)) return undefined;
    return this.snapshot.read(maxAgeMs, this.walk);
  }

  /** Runs `send` (a change of a record), then drops the snapshot: a walk before it would not show it. */
  async changing<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } finally {
      this.snapshot.invalidate();
    }
  }
}

/** The list states of one account, by list operation: its snapshots and page schemas. */
export class KindListStates implements KindListStore {
  private readonly states = new Map<string, KindListState<unknown>>();

  /** `now` is the snapshots' clock (ms since the epoch). */
  constructor(private readonly now: () => number) {}

  /** The state of list `operation`, made with its first use. */
  of<R>(operation: string, record: z.ZodType<R>, id: (record: R) => string): KindListState<R> {
    let state = this.states.get(operation) as KindListState<R> | undefined;
    if (!state) {
      state = {
        snapshot: new ListSnapshot<R>(id, this.now),
        pageSchema: pageOf(record) as unknown as z.ZodType<Page<R>>,
        details: new ListDetails<R>(),
      };
      this.states.set(operation, state as KindListState<unknown>);
    }
    return state;
  }
}
