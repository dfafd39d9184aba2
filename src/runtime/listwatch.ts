import { statusCodeOf, WatchHeldError } from "./kube-errors.js";
import type { KubeTransport } from "./kube-transport.js";
import { unreachableOr } from "./kube-unreachable.js";
import { type KubeObject, type ResourceDescriptor, resourcePath, withKind } from "./resource.js";

/** What {@link listObjects} asks for: a `KubeClient`'s (kube.ts) requests. */
interface KubeRequester {
  request(method: "GET", path: string, query: Record<string, string>): Promise<unknown>;
}

/** What {@link listObjects} reads: a selector, and what each item is made as it arrives. */
export interface ListOptions<T> {
  labelSelector?: string;
  transform?: (obj: T) => T;
}

/** A list's items and resourceVersion. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/** What a list+watch uses of a `KubeClient` (kube.ts): its paged list and its transport. */
export interface KubeLister {
  readonly transport: KubeTransport;
  list<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    namespace?: string,
    options?: ListOptions<T>,
  ): Promise<ListResult<T>>;
}

/** Items per page of a list (client-go's pager and informers: 500). */
export const LIST_PAGE = 500;

/**
 * Lists objects (all namespaces when `namespace` is absent) and the list's
 * resourceVersion, in pages of {@link LIST_PAGE} (client-go's pager; a 410 `continue`
 * starts again in one piece). `transform` maps each item as its page arrives.
 */
export async function listObjects<T extends KubeObject = KubeObject>(
  kube: KubeRequester,
  res: ResourceDescriptor,
  namespace?: string,
  options: ListOptions<T> = {},
): Promise<ListResult<T>> {
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
      page = (await kube.request("GET", path, query)) as Page;
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

/** How a watch of an informer (informer.ts) ended. */
export type WatchOutcome =
  | { kind: "closed"; events: number; ms: number }
  | { kind: "gone" }
  | { kind: "relist"; err: unknown }
  | { kind: "held"; err: WatchHeldError }
  | { kind: "silent" }
  | { kind: "checked" }
  | { kind: "stopped" }
  | { kind: "error"; err: unknown };

/** The outcome of a watch that ended with `err` (null: closed) after `events` events in `ms`. */
export function watchEnd(err: unknown, events: number, ms: number): WatchOutcome {
  if (!err) return { kind: "closed", events, ms };
  if (statusCodeOf(err) === 410) return { kind: "gone" };
  if (err instanceof WatchHeldError) return { kind: "held", err };
  if ((err as { relist?: unknown }).relist === true) return { kind: "relist", err };
  // client-node's own inactivity timeout: the same as the informer's watchdog firing.
  if ((err as { name?: unknown }).name === "TimeoutError") return { kind: "silent" };
  return { kind: "error", err };
}

/** A watch in progress; `abort` ends it without calling its done callback usefully. */
export interface WatchHandle {
  abort(): void;
}

/**
 * The list and watch calls of one kind in one scope (a namespace or all). The real one
 * is {@link kubeListerWatcher}; tests pass fakes.
 */
export interface ListerWatcher {
  list(): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  /**
   * Starts a watch from `resourceVersion`. `onEvent` gets ADDED, MODIFIED, DELETED,
   * BOOKMARK and ERROR events; `onDone` is called once when the stream ends (`err`
   * null for a clean close; an error with `statusCode`/`code` 410 means Gone).
   */
  watch(
    resourceVersion: string,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle>;
  /**
   * Called when the last watch went silent for `watchdogMs` (the informer's watchdog
   * fired): the connection under it may be dead, or the watch only quiet (a server
   * that sends no bookmarks). Optional.
   */
  silent?(watchdogMs: number): void;
}

/** The longest the watch after a silent one waits for its answer before its connection is dropped. */
const SILENT_CHECK_MAX_MS = 10_000;

/**
 * The real list+watch of `res` in `namespace` (all when undefined) over the client's
 * connection, of the objects `res.labelSelector` selects when it has one. No
 * inactivity timeout of its own: the informer's watchdog decides when a watch is
 * silent. The watch started after a silent one checks the connection: the API server
 * answers a watch at once, so when no answer comes within the watchdog period (at most
 * {@link SILENT_CHECK_MAX_MS}) the connection is dropped and the watch fails over to a
 * new one; an answer means the watch was only quiet (a server without watch cache
 * sends no bookmarks), and the connection, shared by every request, stays. A watch that
 * ends without an answer ends with a KubeUnreachableError, as a request does. `keep`
 * makes each listed object what the cache keeps (cache.ts's `leanObject`).
 */
export function kubeListerWatcher(
  kube: KubeLister,
  res: ResourceDescriptor,
  namespace: string | undefined,
  keep?: (obj: KubeObject) => KubeObject,
): ListerWatcher {
  // Set by a silent watch: how long the next one may take to be answered.
  let checkWithinMs: number | undefined;
  return {
    // Each page lean as it arrives, so that a relist never holds every full item at once.
    list: () =>
      kube.list(res, namespace, {
        ...(res.labelSelector ? { labelSelector: res.labelSelector } : {}),
        ...(keep ? { transform: keep } : {}),
      }),
    silent: (watchdogMs) => {
      checkWithinMs = Math.min(watchdogMs, SILENT_CHECK_MAX_MS);
    },
    watch(resourceVersion, onEvent, onDone) {
      // The connection this watch starts on.
      const started = kube.transport.connections.generation();
      const watching = kube.transport.watch(
        resourcePath(res, namespace),
        {
          resourceVersion,
          allowWatchBookmarks: "true",
          ...(res.labelSelector ? { labelSelector: res.labelSelector } : {}),
          // Like client-go: the server ends each watch after 5-10 min, spreading relists.
          timeoutSeconds: String(300 + Math.floor(Math.random() * 300)),
        },
        onEvent,
        // An end without answer, or with a front's 502, is what it is of a request (kube.ts).
        (err) => onDone(err && unreachableOr(err)),
      );
      if (checkWithinMs === undefined) return watching;
      const check = setTimeout(() => kube.transport.connections.drop(started), checkWithinMs);
      checkWithinMs = undefined;
      return watching.finally(() => clearTimeout(check));
    },
  };
}

/** `res` whose lists and watches also select `extra` (joined with its own selector). */
export function withSelector(
  res: ResourceDescriptor,
  extra: string | undefined,
): ResourceDescriptor {
  if (!extra) return res;
  return { ...res, labelSelector: res.labelSelector ? `${res.labelSelector},${extra}` : extra };
}
