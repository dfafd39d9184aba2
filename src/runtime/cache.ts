/**
 * The informer cache: one informer per kind ({@link InformerCache}), its objects by key
 * and index ({@link ObjectStore}), read by reconcilers instead of GETs ({@link CacheReader}).
 */
import type { Logger } from "pino";
import { Informer, type InformerOptions } from "./informer.js";
import type { StoreEvent } from "./informer-store.js";
import type { KubeClient } from "./kube.js";
import { kubeListerWatcher, type ListerWatcher, withSelector } from "./listwatch.js";
import {
  cacheId,
  formatKey,
  type KubeObject,
  keyOf,
  type ObjectKey,
  objectKeyString,
  type ResourceDescriptor,
} from "./resource.js";

/** Maps an object to the index values it is listed under (e.g. the names it references). */
export type IndexFunc = (obj: KubeObject) => string[];

/**
 * The objects of one kind, with indexes; lean ({@link leanObject}) and deeply frozen, so
 * a reconciler changing one by mistake fails loudly instead of corrupting the cache.
 */
export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly indexers = new Map<string, IndexFunc>();
  /** index name → index value → keys */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  list(namespace?: string): KubeObject[] {
    const all = [...this.objects.values()];
    if (namespace === undefined) return all;
    return all.filter((o) => (o.metadata?.namespace ?? "") === namespace);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** Adds (or replaces) an index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunc): void {
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indexes.set(name, index);
    for (const [key, obj] of this.objects) addToIndex(index, fn(obj), key);
  }

  /** Objects listed under `value` in index `name`; throws for an unknown index. */
  byIndex(name: string, value: string): KubeObject[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index named ${JSON.stringify(name)}`);
    return [...(index.get(value) ?? [])].flatMap<KubeObject>((k) => this.objects.get(k) ?? []);
  }

  /** Inserts or replaces an object; undefined when the stored one has its resourceVersion. */
  upsert(obj: KubeObject): StoreEvent | undefined {
    const key = objectKeyString(obj);
    const old = this.objects.get(key);
    if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return undefined;
    const frozen = deepFreeze(leanObject(obj));
    if (old) this.unindex(key, old);
    this.objects.set(key, frozen);
    this.index(key, frozen);
    return old ? { type: "update", object: frozen, old } : { type: "add", object: frozen };
  }

  /** Removes an object; the event (with the last known object) if it was stored. */
  remove(obj: KubeObject): StoreEvent | undefined {
    const key = objectKeyString(obj);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.objects.delete(key);
    return { type: "delete", object: deepFreeze(obj.metadata ? obj : old) };
  }

  /** Makes `namespace` (all when undefined) hold `items`, as after a relist; the events. */
  replace(items: KubeObject[], namespace?: string): StoreEvent[] {
    const events: StoreEvent[] = [];
    const fresh = new Set(items.map(objectKeyString));
    for (const old of this.list(namespace)) {
      if (!fresh.has(objectKeyString(old))) {
        const ev = this.remove(old);
        if (ev) events.push({ ...ev, object: old });
      }
    }
    for (const item of items) {
      const ev = this.upsert(item);
      if (ev) events.push(ev);
    }
    return events;
  }

  private index(key: string, obj: KubeObject): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indexes.get(name);
      if (index) addToIndex(index, fn(obj), key);
    }
  }

  private unindex(key: string, obj: KubeObject): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indexes.get(name);
      if (!index) continue;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}

function addToIndex(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const value of values) {
    let keys = index.get(value);
    if (!keys) {
      keys = new Set();
      index.set(value, keys);
    }
    keys.add(key);
  }
}

/** kubectl's copy of the last applied manifest (`kubectl apply`, client side). */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * `obj` without `metadata.managedFields` and the {@link LAST_APPLIED_ANNOTATION}, which no
 * controller reads; writes are merge patches naming their own fields, so neither is lost.
 */
export function leanObject(obj: KubeObject): KubeObject {
  const m = obj.metadata;
  if (!m) return obj;
  const applied = m.annotations !== undefined && LAST_APPLIED_ANNOTATION in m.annotations;
  if (!("managedFields" in m) && !applied) return obj;
  const { managedFields: _dropped, ...metadata } = m;
  if (applied && m.annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _applied, ...annotations } = m.annotations;
    metadata.annotations = annotations;
  }
  return { ...obj, metadata };
}

export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}

/** Read access to the informer caches; a kind no controller declared throws. */
export interface CacheReader {
  /** The object with this key (`{namespace, name}` or `"namespace/name"`), if cached. */
  get<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey | string,
  ): T | undefined;
  list<T extends KubeObject = KubeObject>(res: ResourceDescriptor, namespace?: string): T[];
  /** The objects an index lists under `value` (see ControllerBuilder.index). */
  byIndex<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    indexName: string,
    value: string,
  ): T[];
}

/** A watch's map to the `primary` objects whose index lists the object as `namespace/name`. */
export function referrersByIndex(primary: ResourceDescriptor, index: string) {
  return (obj: KubeObject, cache: CacheReader): ObjectKey[] =>
    cache.byIndex(primary, index, `${obj.metadata?.namespace}/${obj.metadata?.name}`).map(keyOf);
}

/** One informer per kind, shared by every controller; the manager owns it. */
export class InformerCache implements CacheReader {
  private readonly informers = new Map<string, Informer<ObjectStore>>();
  private started = false;

  /** `listerWatcher` replaces the real list+watch through `kube` (tests). */
  constructor(
    private readonly kube: KubeClient,
    private readonly options: InformerOptions & {
      log?: Logger;
      listerWatcher?: (res: ResourceDescriptor, namespace: string | undefined) => ListerWatcher;
      /** A label selector added to a kind's lists and watches (a shard's); its cache id stays. */
      watchSelector?: (res: ResourceDescriptor) => string | undefined;
    } = {},
  ) {}

  /**
   * The informer of `res` (and its label selector), made on first use. `namespaces` scopes
   * it instead of the cache's (e.g. Secrets of the operator's namespace), one scope a kind.
   */
  informerFor(res: ResourceDescriptor, namespaces?: readonly string[]): Informer<ObjectStore> {
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
      const lw = (ns: string | undefined) =>
        listerWatcher?.(watched, ns) ?? kubeListerWatcher(this.kube, watched, ns, leanObject);
      informer = new Informer(res, new ObjectStore(), lw, options);
      this.informers.set(id, informer);
      if (this.started) informer.start();
    }
    return informer;
  }

  addIndex(res: ResourceDescriptor, name: string, fn: IndexFunc): void {
    this.informerFor(res).store.addIndex(name, fn);
  }

  start(): void {
    this.started = true;
    for (const i of this.informers.values()) i.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /** Each kind, whether it has listed, and the error holding it back if any (cache-sync.ts). */
  kinds(): Array<{ kind: string; synced: boolean; error: unknown }> {
    return [...this.informers].map(([kind, i]) => ({
      kind,
      synced: i.hasSynced(),
      error: i.lastError(),
    }));
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

  private existing(res: ResourceDescriptor): Informer<ObjectStore> {
    const informer = this.informers.get(cacheId(res));
    if (!informer) {
      throw new Error(
        `${cacheId(res)} is not cached: declare it on a controller with for(), watches() or index()`,
      );
    }
    return informer;
  }
}
