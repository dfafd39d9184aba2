import { type KubeObject, objectKeyString } from "./resource.js";

/** Maps an object to the index values it is listed under (e.g. the names it references). */
export type IndexFunc = (obj: KubeObject) => string[];

/** What changed in a store; `old` is the previous object of an update. */
export interface StoreEvent {
  type: "add" | "update" | "delete";
  object: KubeObject;
  old?: KubeObject;
}

/**
 * The objects of one kind, by key (`namespace/name`), with secondary indexes. Objects
 * are deeply frozen on the way in, so a reconciler that changes a cached object by
 * mistake fails loudly instead of corrupting the cache. What nothing reads from the
 * cache is dropped on the way in ({@link leanObject}, as controller-runtime's cache
 * `TransformFunc`s do): `metadata.managedFields` and kubectl's last-applied annotation,
 * often the largest parts of an object.
 */
export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly indexers = new Map<string, IndexFunc>();
  /** index name → index value → keys */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  /** The object with this key, or undefined. */
  get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  /** All objects, or those of one namespace. */
  list(namespace?: string): KubeObject[] {
    const all = [...this.objects.values()];
    if (namespace === undefined) return all;
    return all.filter((o) => (o.metadata?.namespace ?? "") === namespace);
  }

  /** All keys. */
  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** Number of objects. */
  get size(): number {
    return this.objects.size;
  }

  /**
   * Adds an index; existing objects are indexed at once. Adding an index with a name
   * already in use replaces it.
   */
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
    const keys = index.get(value);
    if (!keys) return [];
    return [...keys].flatMap((k) => {
      const o = this.objects.get(k);
      return o ? [o] : [];
    });
  }

  /**
   * Inserts or replaces an object. Returns the event, or undefined when the stored
   * object already has this resourceVersion.
   */
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

  /** Removes an object; returns the event (with the last known object) if it was stored. */
  remove(obj: KubeObject): StoreEvent | undefined {
    const key = objectKeyString(obj);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.objects.delete(key);
    return { type: "delete", object: deepFreeze(obj.metadata ? obj : old) };
  }

  /**
   * Makes the store's content in `namespace` (all namespaces when undefined) equal to
   * `items`, as after a relist; returns the resulting events (deletes of objects that
   * vanished, adds and updates).
   */
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
 * `obj` as the cache keeps it: without `metadata.managedFields` (controller-runtime's
 * `TransformStripManagedFields`) and without the {@link LAST_APPLIED_ANNOTATION} (a
 * second copy of the spec, labels and annotations), which no controller reads. Writes
 * are merge patches naming their own fields, so neither is ever written back or lost;
 * the status, the resourceVersion and every other field stay, since a status write is
 * skipped only when the computed status equals the cached one. The same object when
 * there is nothing to drop.
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

/** Freezes an object graph in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}
