/**
 * How every request and watch made with one kubeconfig object reaches the API server:
 * over the current dispatcher (kube-connection.ts), with the config's credentials (read
 * anew after a 401). Requests time out as the API server's own 60 s; watches only by the
 * informer's watchdog (listwatch.ts).
 */
import { StringDecoder } from "node:string_decoder";
import type { Dispatcher } from "undici";
import {
  type Generation,
  type KubeConnectionOptions,
  KubeConnections,
  MAX_RESENDS,
  ResendError,
} from "./kube-connection.js";
import {
  invalidateCredentials,
  type KubeConfigLike,
  type RequestCredentials,
  requestCredentials,
} from "./kube-credentials.js";
import {
  answeredWatchEnd,
  isConnectionReset,
  isCut,
  isHeldAnswer,
  statusCodeOf,
  WatchDecodeError,
  WatchNotAnsweredError,
  WatchStatusError,
} from "./kube-errors.js";
import type { KubeObject } from "./resource.js";
import { operatorUserAgent } from "./user-agent.js";

export type { KubeConfigLike } from "./kube-credentials.js";

/** An answer: the HTTP status, the body's text, its Retry-After header if any. */
export interface KubeHttpAnswer {
  status: number;
  text: string;
  retryAfter?: string | undefined;
  /** Whether it carries the Audit-Id header of the API server's answers (kube-errors.ts). */
  audited: boolean;
}

/** A watch under way; `abort` ends it without calling its done callback. */
export interface KubeStream {
  abort(): void;
}

export class KubeTransport {
  /** Its dispatchers (kube-connection.ts): a silent watch's generation is dropped there. */
  readonly connections: KubeConnections;
  /** Reads a request's TLS options and headers from the config (its credentials). */
  private readonly credentials: () => Promise<RequestCredentials>;
  /** The last credentials read and when, while the config says they hold. */
  private filled: { c: RequestCredentials; at: number } | undefined;
  /** Counts {@link refreshCredentials} calls: a read begun before one is not kept. */
  private refreshes = 0;
  private readonly requestTimeoutMs: number;

  constructor(
    private readonly config: KubeConfigLike,
    options: KubeConnectionOptions = {},
  ) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.credentials = requestCredentials(config, options.userAgent ?? operatorUserAgent());
    this.connections = new KubeConnections(config, options);
  }

  /** The transport of `config`, shared by every client made with that object. */
  static of(config: KubeConfigLike): KubeTransport {
    let http = transports.get(config);
    if (!http) {
      http = new KubeTransport(config);
      transports.set(config, http);
    }
    return http;
  }

  /** Has the next request read its credentials anew; false when none could have changed. */
  refreshCredentials(): boolean {
    this.filled = undefined;
    this.refreshes++;
    return invalidateCredentials(this.config);
  }

  /** Sends one request; resolves with its answer, whatever its status. */
  async request(
    method: string,
    path: string,
    body?: string,
    contentType?: string,
    resent = 0,
  ): Promise<KubeHttpAnswer> {
    const { g, headers } = await this.prepare();
    if (body !== undefined) headers["content-type"] = contentType ?? "application/json";
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let retryAfter: string | undefined;
      let audited = false;
      g.dispatcher.dispatch(
        {
          origin: g.origin,
          path: g.prefix + path,
          method: method as Dispatcher.HttpMethod,
          headers,
          body: body ?? null,
          servername: g.servername,
          headersTimeout: this.requestTimeoutMs,
          bodyTimeout: this.requestTimeoutMs,
        } as Dispatcher.DispatchOptions,
        {
          onRequestStart(c) {
            if (g.retired && resent < MAX_RESENDS) c.abort(new ResendError());
          },
          onResponseStart(_c, code, h) {
            status = code;
            const ra = h["retry-after"];
            retryAfter = Array.isArray(ra) ? ra[0] : ra;
            audited = h["audit-id"] !== undefined;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            const text =
              chunks.length === 1
                ? (chunks[0] as Buffer).toString("utf8")
                : Buffer.concat(chunks).toString("utf8");
            resolve({ status, text, retryAfter, audited });
          },
          onResponseError: (_c, err) => {
            if (err instanceof ResendError) {
              resolve(this.request(method, path, body, contentType, resent + 1));
            } else reject(err);
          },
        },
      );
    });
  }

  /**
   * Starts a watch of `path`; resolves once answered 200, else once ended. `onDone` is
   * called once: null for a clean end, also a cut between events (a proxy's idle timeout:
   * client-go resumes then too); {@link WatchDecodeError}, {@link answeredWatchEnd}'s or
   * {@link WatchNotAnsweredError} when the watcher must list again; {@link WatchStatusError}
   * for a status other than 200; else the error.
   */
  async watch(
    path: string,
    query: Record<string, string>,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
    resent = 0,
  ): Promise<KubeStream> {
    const { g, headers } = await this.prepare();
    const times = { sent: Date.now(), answered: 0 };
    let finished = false;
    let controller: Dispatcher.DispatchController | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      if (statusCodeOf(err) === 401) this.refreshCredentials();
      onDone(err);
    };
    const handle: KubeStream = {
      abort: () => {
        finished = true;
        controller?.abort(new Error("watch aborted"));
      },
    };
    return new Promise((resolve) => {
      const decoder = new StringDecoder("utf8");
      let status = 0;
      let audited = false;
      let pending = "";
      const line = (text: string) => {
        if (finished || text.trim() === "") return;
        const err = decodeEvent(path, text, onEvent);
        if (err) {
          finish(err);
          controller?.abort(err);
        }
      };
      g.dispatcher.dispatch(
        {
          origin: g.origin,
          path: g.prefix + withQuery(path, { ...query, watch: "true" }),
          method: "GET",
          headers,
          servername: g.servername,
          headersTimeout: this.requestTimeoutMs,
          bodyTimeout: 0,
        } as Dispatcher.DispatchOptions,
        {
          onRequestStart(c) {
            controller = c;
            if (finished) c.abort(new Error("watch aborted"));
            else if (g.retired && resent < MAX_RESENDS) c.abort(new ResendError());
          },
          onResponseStart: (_c, code, h) => {
            status = code;
            times.answered = Date.now();
            audited = h["audit-id"] !== undefined;
            if (code === 200) return resolve(handle);
            // Not answered while an error's page follows (cut past the request timeout).
            const cut = new WatchStatusError(code, "(its page did not end)", audited);
            setTimeout(() => finished || controller?.abort(cut), this.requestTimeoutMs).unref();
          },
          onResponseData(_c, chunk) {
            pending += decoder.write(chunk);
            if (status !== 200) return;
            let nl = pending.indexOf("\n");
            while (nl >= 0 && !finished) {
              line(pending.slice(0, nl));
              pending = pending.slice(nl + 1);
              nl = pending.indexOf("\n");
            }
          },
          onResponseEnd() {
            pending += decoder.end();
            if (status !== 200) {
              finish(new WatchStatusError(status, pending, audited));
              return resolve(handle);
            }
            line(pending);
            finish(answeredWatchEnd(path, times, ""));
          },
          onResponseError: (_c, err) => {
            const waited = Date.now() - times.sent;
            const held = status === 0 && isHeldAnswer(err, waited);
            // Sent on a connection cut as it went (its close not yet seen): again, on another.
            const lost = status === 0 && !held && isConnectionReset(err) && resent < MAX_RESENDS;
            if (err instanceof ResendError || lost) {
              resolve(this.watch(path, query, onEvent, onDone, resent + 1));
              return;
            }
            if (held) {
              finish(new WatchNotAnsweredError(path, waited, err));
            } else if (status === 200 && isCut(err)) {
              finish(answeredWatchEnd(path, times, pending + decoder.end(), err));
            } else finish(err);
            resolve(handle);
          },
        },
      );
    });
  }

  /** The current dispatcher if made with the request's TLS options (else renewed), and its headers. */
  private async prepare(): Promise<{ g: Generation; headers: Record<string, string | string[]> }> {
    const c = await this.currentCredentials();
    const now = this.connections.current;
    const fits = now && now.tls === c.tls && !now.dispatcher.closed && !now.dispatcher.destroyed;
    const g = fits ? now : await this.connections.renew(c);
    return { g, headers: { ...c.headers } };
  }

  /** The credentials of a request now: the last ones read while they hold, else read anew. */
  private async currentCredentials(): Promise<RequestCredentials> {
    const maxAge = this.config.credentialsMaxAgeMs;
    const now = Date.now();
    if (this.filled && maxAge !== undefined && now - this.filled.at < maxAge) return this.filled.c;
    const refreshes = this.refreshes;
    const c = await this.credentials();
    if (maxAge !== undefined && refreshes === this.refreshes) this.filled = { c, at: now };
    return c;
  }
}

/** Hands the event of a watch's `line` to `onEvent`; a line that is not one is an error. */
function decodeEvent(
  path: string,
  line: string,
  onEvent: (type: string, obj: KubeObject) => void,
): Error | undefined {
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
}

export function withQuery(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return q ? `${path}?${q}` : path;
}

/** One transport per kubeconfig object ({@link KubeTransport.of}). */
const transports = new WeakMap<KubeConfigLike, KubeTransport>();
