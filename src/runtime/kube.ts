import { DEFAULT_KUBE_RATE_LIMIT } from "./defaults.js";
import { type KubeConfigLike, KubeHttp2, type KubeStream } from "./kube-http2.js";
import { TokenBucket, type TokenBucketOptions } from "./ratelimit.js";
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
 * watch of a client runs on
 * one HTTP/2 connection per kubeconfig object ({@link KubeHttp2}), shared by every
 * client made with that object (Events, the Lease and the controllers alike).
 */
export class KubeClient {
  /** The kubeconfig: client-node's `KubeConfig` or the lean loader's (kube-config.ts). */
  readonly config: KubeConfigLike;
  private readonly http: KubeHttp2;
  private readonly bucket: TokenBucket;
  private readonly onRequest: ((info: KubeRequestInfo) => void) | undefined;
  private readonly redactor: SecretRedactor | undefined;
  /** `resource|namespace/name` → the resourceVersions this client's last writes produced. */
  private readonly written = new Map<string, string[]>();
  private readonly rememberWrites: boolean;

  constructor(config: KubeConfigLike, options: KubeClientOptions = {}) {
    this.config = config;
    this.rememberWrites = options.rememberWrites ?? true;
    this.http = connectionOf(config);
    this.bucket = new TokenBucket(options.rateLimit ?? DEFAULT_KUBE_RATE_LIMIT);
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

  /** Lists objects (all namespaces when `namespace` is absent) and the list's resourceVersion. */
  async list<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    namespace?: string,
    options: { labelSelector?: string } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const query: Record<string, string> = {};
    if (options.labelSelector) query.labelSelector = options.labelSelector;
    const list = (await this.request("GET", resourcePath(res, namespace), query)) as {
      items?: T[];
      metadata?: { resourceVersion?: string };
    };
    return {
      items: (list.items ?? []).map((o) => withKind(res, o)),
      resourceVersion: list.metadata?.resourceVersion ?? "",
    };
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
   * {@link KubeHttp2.watch}). Not rate-limited, like client-go's watches.
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
        } catch {
          return; // not an event: skipped, as client-node did
        }
        if (typeof event.type === "string") onEvent(event.type, event.object as KubeObject);
      },
      onDone,
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

  /** Any request by path; the body is JSON. Rate-limited and observed like the rest. */
  async request(
    method: Method,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
    contentType?: string,
  ): Promise<unknown> {
    // A reconcile abandoned at its deadline writes nothing more (reconcile-deadline.ts).
    assertReconcileLive(`${method} ${path}`);
    const waitMs = this.bucket.reserve();
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
    assertReconcileLive(`${method} ${path}`);
    const started = Date.now();
    let code = 0;
    try {
      // Serialized once, redacted on the way (status, Events, annotations).
      const sent =
        body === undefined
          ? undefined
          : this.redactor
            ? this.redactor.serialize(body)
            : JSON.stringify(body);
      const answer = await this.http.request(method, withQuery(path, query), sent, contentType);
      code = answer.status;
      let parsed: unknown = answer.text;
      try {
        parsed = answer.text ? JSON.parse(answer.text) : undefined;
      } catch {
        // not JSON: keep the text for the error message
      }
      if (code >= 200 && code <= 299) return parsed;
      throw new KubeApiError(method, path, code, parsed);
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

/** `path` with `query` appended. */
function withQuery(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return q ? `${path}?${q}` : path;
}

/** One connection per kubeconfig object, shared by every client made with it. */
const connections = new WeakMap<KubeConfigLike, KubeHttp2>();

function connectionOf(config: KubeConfigLike): KubeHttp2 {
  let http = connections.get(config);
  if (!http) {
    http = new KubeHttp2(config);
    connections.set(config, http);
  }
  return http;
}
