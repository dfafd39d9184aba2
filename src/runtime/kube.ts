import { isNotFound, statusCodeOf, WatchDecodeError } from "./kube-errors.js";
import {
  type KubeMethod,
  type KubeRequestOptions,
  KubeRequests,
  type ReconcileView,
  withQuery,
} from "./kube-requests.js";
import { type KubeConfigLike, type KubeStream, KubeTransport } from "./kube-transport.js";
import {
  apiVersionOf,
  type KubeObject,
  type ObjectKey,
  type ResourceDescriptor,
  resourceId,
  resourcePath,
  withKind,
} from "./resource.js";

/** The one field manager of every write the operator makes. */
export const FIELD_MANAGER = "aidc-operator";

/** Options of a {@link KubeClient}. */
export interface KubeClientOptions extends KubeRequestOptions {
  /**
   * Remember the resourceVersions this client's writes produce, for
   * {@link KubeClient.isOwnWrite} (default true). A client whose writes nobody asks
   * about (the Event recorder's: thousands of Events an hour) keeps nothing.
   */
  rememberWrites?: boolean;
}

/** Patch content types accepted by {@link KubeClient.patch}. */
export type PatchType = "merge" | "json";

/**
 * Own writes remembered per object, and objects remembered (`isOwnWrite`): enough for a
 * watch that lags several refused creates (three writes each) behind.
 */
const WRITTEN_VERSIONS = 16;
const WRITTEN_OBJECTS = 50_000;

function writtenKey(res: ResourceDescriptor, obj: KubeObject): string {
  return `${resourceId(res)}|${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

/**
 * A small typed wrapper over the Kubernetes REST API for any kind described by a
 * {@link ResourceDescriptor}. Every write carries field manager `aidc-operator`.
 * Reconcilers read from the cache; they use this client to write. Every request and
 * watch runs on one transport per kubeconfig object ({@link KubeTransport}), shared by
 * every client made with that object (Events, the Lease and the controllers alike).
 * A 429 (and a GET's 5xx with Retry-After) waits and tries again, a 401 fetches the
 * credentials anew and tries once more, lists are read in pages.
 */
export class KubeClient {
  /** The kubeconfig: client-node's `KubeConfig` or the lean loader's (kube-config.ts). */
  readonly config: KubeConfigLike;
  private readonly http: KubeTransport;
  private readonly requests: KubeRequests;
  /** `resource|namespace/name` → the resourceVersions this client's last writes produced. */
  private readonly written = new Map<string, string[]>();
  private readonly rememberWrites: boolean;
  /** The reconcile of a view ({@link forReconcile}). */
  private reconcile: ReconcileView | undefined;

  constructor(config: KubeConfigLike, options: KubeClientOptions = {}) {
    this.config = config;
    this.rememberWrites = options.rememberWrites ?? true;
    this.http = connectionOf(config);
    this.requests = new KubeRequests(this.http, options);
  }

  /**
   * A view of this client for one reconcile (its `ctx.kube`): the same connection, rate
   * limit and remembered writes; its requests take `reconcile`'s flow's budget and are
   * refused once it is abandoned. A subclass's overrides hold.
   */
  forReconcile(reconcile: ReconcileView): KubeClient {
    return Object.assign(Object.create(this) as KubeClient, { reconcile });
  }

  /**
   * True when `obj` is exactly the state one of this client's own recent writes
   * produced (same resourceVersion): the watch event that echoes the write, which the
   * writer already knows. Any change by someone else has another resourceVersion.
   */
  isOwnWrite(res: ResourceDescriptor, obj: KubeObject): boolean {
    const rv = obj.metadata?.resourceVersion;
    return rv !== undefined && (this.written.get(writtenKey(res, obj))?.includes(rv) ?? false);
  }

  /** Remembers the resourceVersion a write answered (the last few per object). */
  private remember<T extends KubeObject>(res: ResourceDescriptor, obj: T): T {
    const rv = obj?.metadata?.resourceVersion;
    if (!rv || !this.rememberWrites) return obj;
    const key = writtenKey(res, obj);
    const versions = this.written.get(key) ?? [];
    this.written.delete(key);
    this.written.set(key, [...versions.slice(-(WRITTEN_VERSIONS - 1)), rv]);
    // Oldest first (Map order): forget objects not written for the longest time.
    if (this.written.size > WRITTEN_OBJECTS) {
      const oldest = this.written.keys().next().value;
      if (oldest !== undefined) this.written.delete(oldest);
    }
    return obj;
  }

  /** Reads one object from the API server; undefined when it does not exist. */
  async get<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey,
  ): Promise<T | undefined> {
    try {
      return withKind(
        res,
        (await this.request("GET", resourcePath(res, key.namespace, key.name))) as T,
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Lists objects (all namespaces when `namespace` is absent) and the list's
   * resourceVersion, in pages of {@link LIST_PAGE} as client-go's pager: when the
   * snapshot of a `continue` has expired (410), the list starts again in one piece.
   * `transform` maps each item as its page arrives (an informer drops `managedFields`
   * there), so a long list holds its pages' full items only one page at a time.
   */
  async list<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    namespace?: string,
    options: { labelSelector?: string; transform?: (obj: T) => T } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const transform = options.transform ?? ((o: T) => o);
    const base: Record<string, string> = {};
    if (options.labelSelector) base.labelSelector = options.labelSelector;
    const path = resourcePath(res, namespace);
    type Page = { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } };
    const items: T[] = [];
    let query: Record<string, string> = { ...base, limit: String(LIST_PAGE) };
    for (;;) {
      let page: Page;
      try {
        page = (await this.request("GET", path, query)) as Page;
      } catch (err) {
        if (statusCodeOf(err) !== 410 || !query.continue) throw err;
        items.length = 0;
        query = base;
        continue;
      }
      for (const o of page.items ?? []) items.push(transform(withKind(res, o)));
      const next = page.metadata?.continue;
      if (!next) return { items, resourceVersion: page.metadata?.resourceVersion ?? "" };
      query = { ...base, limit: String(LIST_PAGE), continue: next };
    }
  }

  /** Creates an object (its namespace is taken from metadata). */
  async create<T extends KubeObject = KubeObject>(res: ResourceDescriptor, obj: T): Promise<T> {
    const body = { apiVersion: apiVersionOf(res), kind: res.kind, ...obj };
    const path = resourcePath(res, obj.metadata?.namespace);
    const created = (await this.request("POST", path, { fieldManager: FIELD_MANAGER }, body)) as T;
    return this.remember(res, created);
  }

  /**
   * Replaces an object (PUT). The object's metadata.resourceVersion makes the write
   * fail with 409 when someone changed it meanwhile.
   */
  async replace<T extends KubeObject = KubeObject>(res: ResourceDescriptor, obj: T): Promise<T> {
    const path = resourcePath(res, obj.metadata?.namespace, obj.metadata?.name);
    return this.remember(
      res,
      (await this.request("PUT", path, { fieldManager: FIELD_MANAGER }, obj)) as T,
    );
  }

  /**
   * Patches an object (JSON merge patch by default, or a JSON patch). Put
   * `metadata.resourceVersion` in a merge patch to fail with 409 on a concurrent change.
   */
  async patch<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey,
    body: unknown,
    options: { type?: PatchType; subresource?: string } = {},
  ): Promise<T> {
    const path = resourcePath(res, key.namespace, key.name, options.subresource);
    const contentType =
      options.type === "json" ? "application/json-patch+json" : "application/merge-patch+json";
    return this.remember(
      res,
      (await this.request("PATCH", path, { fieldManager: FIELD_MANAGER }, body, contentType)) as T,
    );
  }

  /** Merge-patches `{ status }` through the status subresource. */
  async patchStatus<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey,
    status: unknown,
  ): Promise<T> {
    return this.patch<T>(res, key, { status }, { subresource: "status" });
  }

  /** Deletes an object (while its uid is `uid`, if given); false if gone or replaced. */
  async delete(res: ResourceDescriptor, key: ObjectKey, uid?: string): Promise<boolean> {
    const body = uid === undefined ? undefined : { preconditions: { uid } };
    try {
      await this.request("DELETE", resourcePath(res, key.namespace, key.name), {}, body);
      return true;
    } catch (err) {
      if (isNotFound(err) || (uid !== undefined && statusCodeOf(err) === 409)) return false;
      throw err;
    }
  }

  /**
   * Starts a watch of `path` (`watch=true` is added to `query`): `onEvent` gets each
   * event's type and object, `onDone` is called once when it ends (see
   * {@link KubeTransport.watch}); a line that is not an event ends the watch with a
   * {@link WatchDecodeError} (its watcher lists again). Not rate-limited, like
   * client-go's watches.
   */
  watch(
    path: string,
    query: Record<string, string>,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<KubeStream> {
    const target = withQuery(path, { ...query, watch: "true" });
    return this.http.watch(
      target,
      (line) => {
        let event: { type?: unknown; object?: unknown };
        try {
          event = JSON.parse(line) as typeof event;
        } catch (err) {
          return new WatchDecodeError(path, line, err);
        }
        if (typeof event?.type !== "string" || typeof event.object !== "object") {
          return new WatchDecodeError(path, line);
        }
        onEvent(event.type, event.object as KubeObject);
        return undefined;
      },
      (err) => {
        // A refused token: the next watch (and request) reads the credentials anew.
        if (statusCodeOf(err) === 401) this.http.refreshCredentials();
        onDone(err);
      },
    );
  }

  /** The generation of the connection requests run on now (see {@link dropConnection}). */
  connectionGeneration(): number {
    return this.http.generation();
  }

  /**
   * Destroys the connection of `generation` if it is still in use (a watch on it went
   * silent): the streams on it fail and the next request connects anew.
   */
  dropConnection(generation: number): boolean {
    return this.http.drop(generation);
  }

  /**
   * Any request by path; the body is JSON. Rate-limited, retried and observed like
   * the rest ({@link KubeRequests.request}).
   */
  request(
    method: KubeMethod,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
    contentType?: string,
  ): Promise<unknown> {
    return this.requests.request(method, path, query, body, contentType, this.reconcile);
  }
}

/** Items per page of a list (client-go's pager and informers: 500). */
export const LIST_PAGE = 500;
/** One transport per kubeconfig object, shared by every client made with it. */
const connections = new WeakMap<KubeConfigLike, KubeTransport>();

function connectionOf(config: KubeConfigLike): KubeTransport {
  let http = connections.get(config);
  if (!http) {
    http = new KubeTransport(config);
    connections.set(config, http);
  }
  return http;
}
