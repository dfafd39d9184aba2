import * as k8s from "@kubernetes/client-node";
import { DEFAULT_KUBE_RATE_LIMIT } from "./defaults.js";
import { shareConnections } from "./kube-connection.js";
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

/** HTTP status of a Kubernetes client error (ours or client-node's ApiException). */
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
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Patch content types accepted by {@link KubeClient.patch}. */
export type PatchType = "merge" | "json";

/**
 * Sends raw JSON requests through client-node's configured HTTP stack (auth, TLS,
 * proxies) and hands back plain JSON: client-node's own deserialisation turns
 * timestamps into Dates, which breaks comparing objects with what was written.
 */
class RawApi extends k8s.KubernetesObjectApi {
  async send(
    method: Method,
    path: string,
    query: Record<string, string>,
    body?: string,
    contentType = "application/json",
  ): Promise<unknown> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, method as k8s.HttpMethod);
    ctx.setHeaderParam("Accept", "application/json");
    for (const [k, v] of Object.entries(query)) ctx.setQueryParam(k, v);
    if (body !== undefined) {
      ctx.setHeaderParam("Content-Type", contentType);
      ctx.setBody(body);
    }
    return this.requestPromise(ctx);
  }

  protected override async processResponse<T extends k8s.KubernetesObject>(
    response: k8s.ResponseContext,
  ): Promise<T> {
    const text = await response.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text for the error message
    }
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) return parsed as T;
    throw new k8s.ApiException(response.httpStatusCode, "", parsed, {});
  }
}

/** Own writes remembered per object, and objects remembered (see `isOwnWrite`). */
const WRITTEN_VERSIONS = 4;
const WRITTEN_OBJECTS = 50_000;

function writtenKey(res: ResourceDescriptor, obj: KubeObject): string {
  return `${resourceId(res)}|${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

/**
 * A small typed wrapper over the Kubernetes REST API for any kind described by a
 * {@link ResourceDescriptor}. Every write carries field manager `aidc-operator`.
 * Reconcilers read from the cache; they use this client to write. Every request made
 * with its KubeConfig (raw, typed, watches) shares one connection ({@link shareConnections}).
 */
export class KubeClient {
  /** The KubeConfig, for making client-node's typed clients (`makeApiClient`). */
  readonly config: k8s.KubeConfig;
  private readonly raw: RawApi;
  private readonly bucket: TokenBucket;
  private readonly onRequest: ((info: KubeRequestInfo) => void) | undefined;
  private readonly redactor: SecretRedactor | undefined;
  /** `resource|namespace/name` → the resourceVersions this client's last writes produced. */
  private readonly written = new Map<string, string[]>();

  constructor(config: k8s.KubeConfig, options: KubeClientOptions = {}) {
    this.config = shareConnections(config);
    this.raw = config.makeApiClient(RawApi);
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
    if (!rv) return obj;
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
      options.type === "json" ? k8s.PatchStrategy.JsonPatch : k8s.PatchStrategy.MergePatch;
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

  /** A client-node typed API client on the same KubeConfig (e.g. `k8s.CoreV1Api`). */
  api<T extends k8s.ApiType>(ctor: new (config: k8s.Configuration) => T): T {
    return this.config.makeApiClient(ctor);
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
    await this.bucket.take();
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
      const result = await this.raw.send(method, path, query, sent, contentType);
      code = method === "POST" ? 201 : 200;
      return result;
    } catch (err) {
      const status = statusCodeOf(err);
      if (status === undefined) throw err;
      code = status;
      throw new KubeApiError(method, path, status, (err as k8s.ApiException<unknown>).body);
    } finally {
      this.onRequest?.({ method, path, code, durationMs: Date.now() - started });
    }
  }
}
