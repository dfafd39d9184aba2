import { DEFAULT_KUBE_RATE_LIMIT } from "./defaults.js";
import {
  type KubeConfigLike,
  type KubeHttpAnswer,
  type KubeStream,
  KubeTransport,
} from "./kube-transport.js";
import { currentReconcileFlow } from "./priority.js";
import { FairTokenBucket, type TokenBucketOptions } from "./ratelimit.js";
import { assertReconcileLive } from "./reconcile-deadline.js";
import type { SecretRedactor } from "./redaction.js";
import {
  apiVersionOf,
  type KubeObject,
  type ObjectKey,
  type ResourceDescriptor,
  resourceId,
  resourcePath,
  withKind,
} from "./resource.js";

/** The one field manager of every write the operator makes (DESIGN §5). */
export const FIELD_MANAGER = "aidc-operator";

/** A Kubernetes API answer other than 2xx. */
export class KubeApiError extends Error {
  /** HTTP status. */
  readonly code: number;
  /** The Status reason (`NotFound`, `Conflict`, `Invalid`...) or `Http<code>`. */
  readonly reason: string;
  /** The parsed response body (usually a metav1.Status). */
  readonly body: unknown;

  constructor(method: string, path: string, code: number, body: unknown) {
    const status = (typeof body === "object" && body !== null ? body : {}) as {
      reason?: string;
      message?: string;
    };
    super(`${method} ${path}: ${code} ${status.message ?? String(body ?? "")}`.trim());
    this.name = "KubeApiError";
    this.code = code;
    this.reason = status.reason || `Http${code}`;
    this.body = body;
  }
}

/** HTTP status of a Kubernetes client error (ours, a watch's, or client-node's ApiException). */
export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === "number") return e.code;
  if (typeof e.statusCode === "number") return e.statusCode;
  return undefined;
}

/** True for 404 Not Found. */
export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
/** True for 409 Conflict (a stale resourceVersion) or AlreadyExists. */
export const isConflict = (err: unknown): boolean => statusCodeOf(err) === 409;

/** One Kubernetes request as observed by {@link KubeClientOptions.onRequest}. */
export interface KubeRequestInfo {
  method: string;
  /** URL path without the query. */
  path: string;
  /** HTTP status, or 0 when no answer came. */
  code: number;
  durationMs: number;
  /** Time the request waited for the client's rate limit before it was sent. */
  rateLimitWaitMs: number;
}

/** Options of a {@link KubeClient}. */
export interface KubeClientOptions {
  /** Client-side rate limit of requests. Default {@link DEFAULT_KUBE_RATE_LIMIT}. */
  rateLimit?: TokenBucketOptions;
  /** Called after every request (metrics, tests counting writes). */
  onRequest?: (info: KubeRequestInfo) => void;
  /**
   * Replaces registered secrets in every body sent (status, Events, annotations), so
   * that no write puts the API key into the cluster, whatever quoted it.
   */
  redactor?: SecretRedactor;
  /**
   * Remember the resourceVersions this client's writes produce, for
   * {@link KubeClient.isOwnWrite} (default true). A client whose writes nobody asks
   * about (the Event recorder's: thousands of Events an hour) keeps nothing.
   */
  rememberWrites?: boolean;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Patch content types accepted by {@link KubeClient.patch}. */
export type PatchType = "merge" | "json";

/**
 * Own writes remembered per object, and objects remembered (see `isOwnWrite`). A
 * refused create writes three times per attempt (the pending marker, its removal, the
 * condition); on a loaded machine the watch can lag several attempts behind, and an
 * echo no longer known as this process's own re-queues the key past its hold (a
 * redirected BlockVolume create was sent 8 times in 3 s so in CI). Only objects written
 * that often keep more than their few writes.
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
  private readonly bucket: FairTokenBucket;
  private readonly onRequest: ((info: KubeRequestInfo) => void) | undefined;
  private readonly redactor: SecretRedactor | undefined;
  /** `resource|namespace/name` → the resourceVersions this client's last writes produced. */
  private readonly written = new Map<string, string[]>();
  private readonly rememberWrites: boolean;

  constructor(config: KubeConfigLike, options: KubeClientOptions = {}) {
    this.config = config;
    this.rememberWrites = options.rememberWrites ?? true;
    this.http = connectionOf(config);
    this.bucket = new FairTokenBucket(options.rateLimit ?? DEFAULT_KUBE_RATE_LIMIT);
    this.onRequest = options.onRequest;
    this.redactor = options.redactor;
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
   */
  async list<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    namespace?: string,
    options: { labelSelector?: string } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
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
      for (const o of page.items ?? []) items.push(withKind(res, o));
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

  /** Deletes an object; false when it was already gone. */
  async delete(res: ResourceDescriptor, key: ObjectKey): Promise<boolean> {
    try {
      await this.request("DELETE", resourcePath(res, key.namespace, key.name));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
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
   * Any request by path; the body is JSON. Rate-limited and observed like the rest
   * (each try). A 429, and a GET's 5xx with Retry-After, waits as the server asks
   * (at most {@link MAX_RETRY_WAIT_MS}) and tries again, up to {@link MAX_RETRIES}
   * times; a 401 makes the credentials be read anew and the request tried once more,
   * and a GET whose connection was closed under it is sent once more.
   */
  async request(
    method: Method,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
    contentType?: string,
  ): Promise<unknown> {
    // Serialized once, redacted on the way (status, Events, annotations).
    const sent =
      body === undefined
        ? undefined
        : this.redactor
          ? this.redactor.serialize(body)
          : JSON.stringify(body);
    const target = withQuery(path, query);
    let refreshed = false;
    let resent = false;
    for (let retries = 0; ; retries++) {
      let answer: KubeHttpAnswer;
      try {
        answer = await this.send(method, path, target, sent, contentType);
      } catch (err) {
        // A kept-alive connection the server had just closed: a GET goes once more.
        if (method !== "GET" || resent || !isConnectionReset(err)) throw err;
        resent = true;
        continue;
      }
      const code = answer.status;
      if (code >= 200 && code <= 299) return parseBody(answer.text);
      if (code === 401 && !refreshed && this.http.refreshCredentials()) {
        refreshed = true;
        continue;
      }
      const waitMs = retryWaitMs(method, answer);
      if (waitMs !== undefined && retries < MAX_RETRIES) {
        await new Promise((r) => setTimeout(r, waitMs));
        continue;
      }
      throw new KubeApiError(method, path, code, parseBody(answer.text));
    }
  }

  /** One try of {@link request}: the rate limit, the reconcile deadline, the metrics. */
  private async send(
    method: Method,
    path: string,
    target: string,
    body: string | undefined,
    contentType: string | undefined,
  ): Promise<KubeHttpAnswer> {
    // A reconcile abandoned at its deadline writes nothing more (reconcile-deadline.ts).
    assertReconcileLive(`${method} ${path}`);
    // Reconciles of different flows (accounts) take the budget in turn (priority.ts).
    const waitMs = await this.bucket.take(currentReconcileFlow());
    assertReconcileLive(`${method} ${path}`);
    const started = Date.now();
    let code = 0;
    try {
      const answer = await this.http.request(method, target, body, contentType);
      code = answer.status;
      return answer;
    } finally {
      this.onRequest?.({
        method,
        path,
        code,
        durationMs: Date.now() - started,
        rateLimitWaitMs: waitMs,
      });
    }
  }
}

/** Items per page of a list (client-go's pager and informers: 500). */
export const LIST_PAGE = 500;
/** Tries after the first one of a request the server asked to retry (429, Retry-After). */
export const MAX_RETRIES = 4;
/** The longest wait for one Retry-After. */
export const MAX_RETRY_WAIT_MS = 10_000;

/**
 * How long to wait before trying `answer`'s request again, or undefined when it is
 * not to be tried again: a 429 (Retry-After, else 1 s), a GET's 5xx with Retry-After
 * (client-go's `checkWait`), at most {@link MAX_RETRY_WAIT_MS}.
 */
export function retryWaitMs(method: string, answer: KubeHttpAnswer): number | undefined {
  const { status } = answer;
  const seconds = answer.retryAfter !== undefined ? Number(answer.retryAfter.trim()) : Number.NaN;
  const given = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
  if (status === 429) return Math.min(given ?? 1000, MAX_RETRY_WAIT_MS);
  if (status >= 500 && method === "GET" && given !== undefined) {
    return Math.min(given, MAX_RETRY_WAIT_MS);
  }
  return undefined;
}

/** A watch line that is not an event: the watch ends with it and its watcher lists again. */
export class WatchDecodeError extends Error {
  /** The informer relists on this error rather than resuming at its resourceVersion. */
  readonly relist = true;
  constructor(path: string, line: string, cause?: unknown) {
    super(`watch of ${path} sent a line that is not an event: ${line.slice(0, 200)}`, {
      cause,
    });
    this.name = "WatchDecodeError";
  }
}

/** An error of a connection the other side closed or reset (undici's socket error, ECONNRESET, EPIPE). */
function isConnectionReset(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE";
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text; // not JSON: kept for the error message
  }
}

/** `path` with `query` appended. */
function withQuery(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return q ? `${path}?${q}` : path;
}

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
