/**
 * One account of the service as every view of its client shares it (client.ts,
 * `ServiceClient.withCall`): the core (transport, rate limit, operation verdicts and
 * probes) and what the account remembers of the service's answers:
 *
 * - the product catalogs: an answer younger than the TTL is reused, one in flight is
 *   shared, and a failed one is forgotten at once, so that a burst of creates of one
 *   product asks the catalog once;
 * - the list snapshots, by list operation (kind-list.ts), so that one walk per asked
 *   age serves every object of the kind whatever reconcile reads it.
 */
import type { z } from "zod";
import { ServiceClientCore } from "./client-core.js";
import type { ServiceClientOptions } from "./client-options.js";
import { DEFAULT_CATALOG_TTL_MS } from "./defaults.js";
import { ListSnapshot } from "./list-snapshot.js";
import type {
  CatalogReads,
  KindListState,
  KindListStore,
  OperationCaller,
  OperationsContext,
} from "./operation-caller.js";
import { type Page, pageOf } from "./schemas/envelope.js";

/**
 * What every view of one account's client shares: the core (transport, rate limit,
 * operation verdicts and probes), the catalog cache and the list snapshots. A kind's
 * controller may key what it remembers of the account's answers on it.
 */
export class ServiceAccount {
  readonly core: ServiceClientCore;
  readonly catalog: CatalogCache;
  readonly lists: KindListStates;
  readonly now: () => number;

  /** Throws an Error when the endpoint overrides are invalid (unknown name, bad path). */
  constructor(readonly options: ServiceClientOptions) {
    this.now = options.now ?? Date.now;
    this.core = new ServiceClientCore(options, this.now);
    this.catalog = new CatalogCache(options.catalogTtlMs ?? DEFAULT_CATALOG_TTL_MS, this.now);
    this.lists = new KindListStates(this.now);
  }

  /**
   * What a view's kind operations modules (src/service/kinds/) keep and call through:
   * `caller`, the view with its call context, and what the account shares.
   */
  operationsContext(caller: OperationCaller): OperationsContext {
    return {
      caller,
      now: this.now,
      catalog: this.catalog,
      lists: this.lists,
      knownMissing: (name) => this.core.knownMissing(name),
      subscriptionResult: this.options.subscriptionResult ?? {},
    };
  }
}

/** The product catalogs' cache of one account; see the module comment. */
export class CatalogCache implements CatalogReads {
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();

  /** `ttlMs` 0 or less reads every time; `now` is the clock (ms since the epoch). */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The answer of `key`, from the cache or from `read()`. */
  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return read();
    const now = this.now();
    const hit = this.answers.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.answer as Promise<T>;
    const answer = read();
    this.answers.set(key, { at: now, answer });
    answer.catch(() => {
      if (this.answers.get(key)?.answer === answer) this.answers.delete(key);
    });
    return answer;
  }

  /** Drops every answer, so that the next read of each key asks the service. */
  forget(): void {
    this.answers.clear();
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
      };
      this.states.set(operation, state as KindListState<unknown>);
    }
    return state;
  }
}
