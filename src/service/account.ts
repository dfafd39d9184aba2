/** One account of the service as every view of its client shares it (client.ts, `ServiceClient.withCall`). */
import { CatalogCache, KindListStates } from "./account-caches.js";
import { ServiceClientCore } from "./client-core.js";
import type { ServiceClientOptions } from "./client-options.js";
import { DEFAULT_CATALOG_TTL_MS } from "./defaults.js";
import type { OperationCaller, OperationsContext } from "./operation-caller.js";

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
