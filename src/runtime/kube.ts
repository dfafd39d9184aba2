/**
 * The Kubernetes client a controller calls: typed verbs for any kind. A request is
 * redacted, waits for its flow's rate (outbound-guards.ts) and a seat (fair-lanes.ts), is
 * refused once its reconcile is abandoned, and is retried as client-go retries.
 */
import {
  DEFAULT_KUBE_MAX_IN_FLIGHT,
  DEFAULT_KUBE_RATE_LIMIT,
  DEFAULT_KUBE_TOTAL_RATE_LIMIT,
} from "./defaults.js";
import { FairSeats } from "./fair-lanes.js";
import {
  isConnectionReset,
  isNotFound,
  KubeApiError,
  MAX_RETRIES,
  ReconcileAbandonedError,
  retryWaitMs,
  statusCodeOf,
} from "./kube-errors.js";
import type { KubeClientOptions, KubeMethod, PatchType, ReconcileView } from "./kube-options.js";
import {
  type KubeConfigLike,
  type KubeHttpAnswer,
  KubeTransport,
  withQuery,
} from "./kube-transport.js";
import { unreachableOr } from "./kube-unreachable.js";
import { type ListOptions, type ListResult, listObjects } from "./listwatch.js";
import { FairTokenBucket } from "./outbound-guards.js";
import {
  apiVersionOf,
  type KubeObject,
  type ObjectKey,
  parseBody,
  type ResourceDescriptor,
  resourceId,
  resourcePath,
  withKind,
} from "./resource.js";

export const FIELD_MANAGER = "aidc-operator";

/** Own writes remembered per object (a lagging watch may trail several), and objects. */
const WRITTEN_VERSIONS = 16;
const WRITTEN_OBJECTS = 50_000;

/** The key of an object's writes: `resource|namespace/name`. */
export function writtenKey(res: ResourceDescriptor, key: Partial<ObjectKey>): string {
  return `${resourceId(res)}|${key.namespace ?? ""}/${key.name ?? ""}`;
}

export class KubeClient {
  /** `config`'s transport; watches start on it directly (listwatch.ts), not rate-limited. */
  readonly transport: KubeTransport;
  private readonly bucket: FairTokenBucket;
  private readonly seats: FairSeats;
  /** `resource|namespace/name` → the resourceVersions this client's last writes produced. */
  private readonly written = new Map<string, string[]>();
  /** The reconcile of a view ({@link forReconcile}). */
  private reconcile: ReconcileView | undefined;

  constructor(
    /** The kubeconfig: client-node's `KubeConfig` or the lean loader's (kube-config.ts). */
    readonly config: KubeConfigLike,
    private readonly options: KubeClientOptions = {},
  ) {
    this.transport = KubeTransport.of(config);
    this.bucket = new FairTokenBucket(
      options.rateLimit ?? { ...DEFAULT_KUBE_RATE_LIMIT, total: DEFAULT_KUBE_TOTAL_RATE_LIMIT },
    );
    this.seats = new FairSeats(options.maxInFlight ?? DEFAULT_KUBE_MAX_IN_FLIGHT);
  }

  /**
   * A view for one reconcile (its `ctx.kube`) sharing this client's limits and writes: it
   * charges the reconcile's flow and refuses requests once it is abandoned (writes also
   * past `mayWrite`).
   */
  forReconcile(reconcile: ReconcileView): KubeClient {
    return Object.assign(Object.create(this) as KubeClient, { reconcile });
  }

  /** True when `obj` is the state one of this client's recent writes produced: its echo. */
  isOwnWrite(res: ResourceDescriptor, obj: KubeObject): boolean {
    const rv = obj.metadata?.resourceVersion;
    return (
      rv !== undefined &&
      (this.written.get(writtenKey(res, obj.metadata ?? {}))?.includes(rv) ?? false)
    );
  }

  /** Undefined when the object does not exist. */
  async get<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey,
  ): Promise<T | undefined> {
    const path = resourcePath(res, key.namespace, key.name);
    try {
      return withKind(res, (await this.request("GET", path)) as T);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Lists objects in pages ({@link listObjects}, with the list's resourceVersion). */
  list<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    namespace?: string,
    options: ListOptions<T> = {},
  ): Promise<ListResult<T>> {
    return listObjects<T>(this, res, namespace, options);
  }

  create<T extends KubeObject = KubeObject>(res: ResourceDescriptor, obj: T): Promise<T> {
    const body = { apiVersion: apiVersionOf(res), kind: res.kind, ...obj };
    return this.write(res, "POST", resourcePath(res, obj.metadata?.namespace), body);
  }

  /** PUT; its resourceVersion makes the write fail with 409 if stale. */
  replace<T extends KubeObject = KubeObject>(res: ResourceDescriptor, obj: T): Promise<T> {
    const path = resourcePath(res, obj.metadata?.namespace, obj.metadata?.name);
    return this.write(res, "PUT", path, obj);
  }

  /** A JSON merge patch (or a JSON patch); `metadata.resourceVersion` in it: 409 if stale. */
  patch<T extends KubeObject = KubeObject>(
    res: ResourceDescriptor,
    key: ObjectKey,
    body: unknown,
    options: { type?: PatchType; subresource?: string } = {},
  ): Promise<T> {
    const path = resourcePath(res, key.namespace, key.name, options.subresource);
    const type = options.type === "json" ? "json-patch+json" : "merge-patch+json";
    return this.write(res, "PATCH", path, body, `application/${type}`);
  }

  patchStatus<T extends KubeObject = KubeObject>(
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
   * Sends one request and answers its parsed body. A 429, and a GET's 5xx with
   * Retry-After, is tried again after the wait asked; a 401 once more with credentials read
   * anew; a GET (not a write: it may have arrived) once more on a connection just closed.
   * Else a {@link KubeApiError}, also for a 2xx that is not JSON, or empty without Audit-Id;
   * a KubeUnreachableError (kube-unreachable.ts) when no answer came, or only a front's
   * 502, 503 or 504.
   */
  async request(
    method: KubeMethod,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
    contentType?: string,
  ): Promise<unknown> {
    const redactor = this.options.redactor;
    const sent =
      body === undefined ? undefined : (redactor?.serialize(body) ?? JSON.stringify(body));
    const target = withQuery(path, query);
    let refreshed = false;
    let resent = false;
    for (let retries = 0; ; retries++) {
      let answer: KubeHttpAnswer;
      try {
        answer = await this.send(method, path, target, sent, contentType);
      } catch (err) {
        if (method !== "GET" || resent || !isConnectionReset(err)) throw unreachableOr(err);
        resent = true;
        continue;
      }
      const code = answer.status;
      const body = parseBody(answer.text);
      // Text that is not JSON is no answer of the API server (a web UI at the server URL),
      // nor nothing without its Audit-Id (Caddy's 200 where no route of it matches).
      const front = typeof body === "string" || (body === undefined && !answer.audited);
      if (code >= 200 && code <= 299 && !front) return body;
      if (code === 401 && !refreshed && this.transport.refreshCredentials()) {
        refreshed = true;
        continue;
      }
      const waitMs = retryWaitMs(method, answer);
      if (waitMs === undefined || retries >= MAX_RETRIES) {
        throw unreachableOr(new KubeApiError(method, path, code, body, answer.audited));
      }
      // Up to half again at random: requests refused together do not come back together.
      await new Promise((r) => setTimeout(r, waitMs * (1 + Math.random() / 2)));
    }
  }

  /** One try of {@link request}: the flow's rate limit, a seat, then the exchange. */
  private async send(
    method: KubeMethod,
    path: string,
    target: string,
    body: string | undefined,
    contentType: string | undefined,
  ): Promise<KubeHttpAnswer> {
    if (this.refused(method)) throw new ReconcileAbandonedError(`${method} ${path}`);
    const flow = this.reconcile?.flow ?? "";
    let waitMs = await this.bucket.take(flow);
    // A seat: a burst of one flow is not all at the server at once.
    const seated = this.seats.acquire(flow);
    if (seated) {
      const seatWait = Date.now();
      await seated;
      waitMs += Date.now() - seatWait;
    }
    if (this.refused(method)) {
      this.seats.release(flow);
      throw new ReconcileAbandonedError(`${method} ${path}`);
    }
    const started = Date.now();
    let code = 0;
    try {
      const answer = await this.transport.request(method, target, body, contentType);
      code = answer.status;
      return answer;
    } finally {
      this.seats.release(flow);
      const durationMs = Date.now() - started;
      const m = this.options.metrics;
      if (m) {
        const host = m.host;
        m.requests.inc({ code: code ? String(code) : "<error>", method, host });
        m.latency.observe({ verb: method, host }, durationMs / 1000);
        m.rateLimitWait.observe({ verb: method, host, limiter: m.limiter }, waitMs / 1000);
      }
      this.options.onRequest?.({ method, path, code, durationMs, rateLimitWaitMs: waitMs });
    }
  }

  /** Whether this reconcile's view sends nothing more: abandoned, or a write past the fence. */
  private refused(method: KubeMethod): boolean {
    const r = this.reconcile;
    return !!r && (r.signal.aborted || (method !== "GET" && this.options.mayWrite?.() === false));
  }

  /** Sends a write; remembers the resourceVersion it answered. */
  private async write<T extends KubeObject>(
    res: ResourceDescriptor,
    method: KubeMethod,
    path: string,
    body: unknown,
    contentType?: string,
  ): Promise<T> {
    const query = { fieldManager: FIELD_MANAGER };
    const obj = (await this.request(method, path, query, body, contentType)) as T;
    const key = writtenKey(res, obj?.metadata ?? {});
    this.reconcile?.written?.set(key, obj);
    const rv = obj?.metadata?.resourceVersion;
    if (!rv || this.options.rememberWrites === false) return obj;
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
}
