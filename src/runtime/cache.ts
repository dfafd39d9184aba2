import type { Logger } from "pino";
import { Informer, type InformerOptions } from "./informer.js";
import type { KubeClient } from "./kube.js";
import { kubeListerWatcher, type ListerWatcher } from "./listwatch.js";
import {
  cacheId,
  formatKey,
  type KubeObject,
  keyOf,
  type ObjectKey,
  type ResourceDescriptor,
} from "./resource.js";
import type { IndexFunc } from "./store.js";

/**
 * Read access to the informer caches. Reconcilers read here instead of GETting from the
 * API server. Objects are frozen: copy before changing. Reading a kind that no
 * controller declared (with `for`, `watches` or `index`) throws.
 */
export interface CacheReader {
  /** The object with this key (`{namespace, name}` or `"namespace/name"`), if cached. */
  get<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey | string,
  ): T | undefined;
  /** All cached objects of a kind, or those of one namespace. */
  list<T extends KubeObject = KubeObject>(res: ResourceDescriptor, namespace?: string): T[];
  /** The objects an index lists under `value` (see ControllerBuilder.index). */
  byIndex<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    indexName: string,
    value: string,
  ): T[];
}

/**
 * A watch's map from a referenced object to the keys of the `primary` objects whose
 * index `index` lists it as `namespace/name` (e.g. the TrainingJobs mounting a NasVolume).
 */
export function referrersByIndex(primary: ResourceDescriptor, index: string) {
  return (obj: KubeObject, cache: CacheReader): ObjectKey[] =>
    cache.byIndex(primary, index, `${obj.metadata?.namespace}/${obj.metadata?.name}`).map(keyOf);
}

/** One informer per kind, shared by every controller; the manager owns it. */
export class InformerCache implements CacheReader {
  private readonly informers = new Map<string, Informer>();
  private started = false;

  /**
   * `listerWatcher` replaces the real list+watch (tests); by default each informer
   * lists and watches through `kube`.
   */
  constructor(
    private readonly kube: KubeClient,
    private readonly options: InformerOptions & {
      log?: Logger;
      listerWatcher?: (res: ResourceDescriptor, namespace: string | undefined) => ListerWatcher;
      /**
       * A label selector added to every list and watch of a kind (a shard's
       * `aidc.io/shard=a`), beside the descriptor's own; undefined: none. The cache
       * keeps its id: readers pass the plain descriptor.
       */
      watchSelector?: (res: ResourceDescriptor) => string | undefined;
    } = {},
  ) {}

  /**
   * The informer of `res`, created on first use (and started if the cache runs); one
   * per kind, and one per label selector of a descriptor that has one.
   * `namespaces` scopes it to those namespaces instead of the cache's (e.g. Secrets of
   * the operator's own namespace); a kind is cached with one scope only.
   */
  informerFor(res: ResourceDescriptor, namespaces?: readonly string[]): Informer {
    const id = cacheId(res);
    let informer = this.informers.get(id);
    const scoped = namespaces ? [...namespaces] : undefined;
    if (informer && scoped && informer.options.namespaces?.join(",") !== scoped.join(",")) {
      throw new Error(`${id} is cached in other namespaces than ${scoped.join(", ")}`);
    }
    if (!informer) {
      const { listerWatcher, watchSelector, ...rest } = this.options;
      const options = scoped ? { ...rest, namespaces: scoped } : rest;
      const watched = withSelector(res, watchSelector?.(res));
      informer = new Informer(
        res,
        (ns) => listerWatcher?.(watched, ns) ?? kubeListerWatcher(this.kube, watched, ns),
        options,
      );
      this.informers.set(id, informer);
      if (this.started) informer.start();
    }
    return informer;
  }

  /** Adds an index to the informer of `res`. */
  addIndex(res: ResourceDescriptor, name: string, fn: IndexFunc): void {
    this.informerFor(res).store.addIndex(name, fn);
  }

  /** Starts every informer. */
  start(): void {
    this.started = true;
    for (const i of this.informers.values()) i.start();
  }

  /** Stops every informer. */
  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /** True when every informer has listed. */
  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Kinds not synced yet, for /readyz. */
  unsynced(): string[] {
    return [...this.informers.entries()].filter(([, i]) => !i.hasSynced()).map(([id]) => id);
  }

  /** Resolves when every informer has listed. */
  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  get<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey | string,
  ): T | undefined {
    const k = typeof key === "string" ? key : formatKey(key);
    return this.existing(res).store.get(k) as T | undefined;
  }

  list<T extends KubeObject = KubeObject>(res: ResourceDescriptor, namespace?: string): T[] {
    return this.existing(res).store.list(namespace) as T[];
  }

  byIndex<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    indexName: string,
    value: string,
  ): T[] {
    return this.existing(res).store.byIndex(indexName, value) as T[];
  }

  private existing(res: ResourceDescriptor): Informer {
    const informer = this.informers.get(cacheId(res));
    if (!informer) {
      throw new Error(
        `${cacheId(res)} is not cached: declare it on a controller with for(), watches() or index()`,
      );
    }
    return informer;
  }
}

/** `res` whose lists and watches also select `extra` (joined with its own selector). */
function withSelector(res: ResourceDescriptor, extra: string | undefined): ResourceDescriptor {
  if (!extra) return res;
  return { ...res, labelSelector: res.labelSelector ? `${res.labelSelector},${extra}` : extra };
}
