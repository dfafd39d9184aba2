/**
 * How every request and watch of a {@link KubeClient} reaches the API server and how
 * its answer is read: over one dispatcher at a time per kubeconfig object
 * (kube-connection.ts: HTTP/2 or HTTP/1.1, proxies, PINGs, GOAWAY). Ordinary requests
 * time out (`requestTimeoutMs`, as the API server's own 60 s); watches only by the
 * informer's watchdog, which calls {@link KubeTransport.drop} with the generation a
 * silent watch ran on. A watch's body is read as lines.
 *
 * Credentials come from a {@link KubeConfigLike}: client-node's `KubeConfig` (any auth
 * it supports) or the operator's lean loader (kube-config.ts): filled per request, or
 * reused as long as the config says they hold (`credentialsMaxAgeMs`: for ever for
 * inline data, a minute for files) and read anew after a 401. Bearer tokens are
 * headers; new TLS material (a rotated client certificate or CA) makes a new
 * dispatcher, the old one closes once its requests end.
 * A header of several values (Impersonate-Group) needs HTTP/1.1 (kube-credentials.ts).
 */
import { StringDecoder } from "node:string_decoder";
import type { Dispatcher } from "undici";
import { connect, type Generation, type KubeConnectionOptions, retire } from "./kube-connection.js";
import {
  invalidateCredentials,
  type KubeConfigLike,
  type RequestCredentials,
  requestCredentials,
  TLS_FIELDS,
} from "./kube-credentials.js";
import { operatorUserAgent } from "./user-agent.js";

export type { KubeConfigLike } from "./kube-credentials.js";

/** An answer: the HTTP status, the body's text, and its Retry-After header if any. */
export interface KubeHttpAnswer {
  status: number;
  text: string;
  retryAfter?: string | undefined;
}

/** A watch under way; `abort` ends it without calling its done callback. */
export interface KubeStream {
  abort(): void;
}

/** An error of a watch the server answered with a status other than 200 (410: Gone). */
export class WatchStatusError extends Error {
  readonly statusCode: number;
  constructor(status: number, text: string) {
    super(`watch answered ${status}: ${text.slice(0, 300)}`);
    this.name = "WatchStatusError";
    this.statusCode = status;
  }
}

/** Options of a {@link KubeTransport}. */
export type KubeTransportOptions = KubeConnectionOptions;

/** Requests and watches over one dispatcher at a time. See the module comment. */
export class KubeTransport {
  private current: Generation | undefined;
  private generations = 0;
  /** Reads a request's TLS options and headers from the config (its credentials). */
  private readonly credentials: () => Promise<RequestCredentials>;
  /** The last credentials read and when, while the config says they hold. */
  private filled: { c: RequestCredentials; at: number } | undefined;
  /** Counts {@link refreshCredentials} calls: a read begun before one is not kept. */
  private refreshes = 0;
  /** The dispatcher being made, if any. */
  private connecting: Promise<Generation> | undefined;
  private readonly requestTimeoutMs: number;

  constructor(
    private readonly config: KubeConfigLike,
    private readonly options: KubeTransportOptions = {},
  ) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.credentials = requestCredentials(config, options.userAgent ?? operatorUserAgent());
  }

  /** The generation requests run on now, or the next one (what a watch runs on), for {@link drop}. */
  generation(): number {
    const g = this.current;
    return g && !g.dispatcher.destroyed ? g.generation : this.generations + 1;
  }

  /** Destroys the dispatcher of `generation` if it is the current one (its requests fail); true when it was. */
  drop(generation: number): boolean {
    const g = this.current;
    if (!g || g.generation !== generation) return false;
    this.current = undefined;
    void g.dispatcher.destroy(new Error("connection dropped: a watch on it went silent"));
    return true;
  }

  /** Closes the dispatcher once its requests end. */
  async close(): Promise<void> {
    const g = this.current;
    this.current = undefined;
    await g?.dispatcher.close();
  }

  /**
   * Makes the next request fetch its credentials anew (a token file read again, an exec
   * plugin run again); false when the kubeconfig has none that could have changed.
   */
  refreshCredentials(): boolean {
    this.filled = undefined;
    this.refreshes++;
    return invalidateCredentials(this.config);
  }

  /** Sends one request; resolves with its status and body (any status). */
  async request(
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<KubeHttpAnswer> {
    const { g, headers } = await this.prepare();
    if (body !== undefined) headers["content-type"] = contentType ?? "application/json";
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let retryAfter: string | undefined;
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
          onRequestStart() {},
          onResponseStart(_c, code, h) {
            status = code;
            const ra = h["retry-after"];
            retryAfter = Array.isArray(ra) ? ra[0] : ra;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            const text =
              chunks.length === 1
                ? (chunks[0] as Buffer).toString("utf8")
                : Buffer.concat(chunks).toString("utf8");
            resolve({ status, text, retryAfter });
          },
          onResponseError(_c, err) {
            reject(err);
          },
        },
      );
    });
  }

  /**
   * Starts a watch (`path` with `watch=true` in its query): `onLine` gets each line of
   * the stream and may answer an error to end the watch with it; `onDone` is called once
   * when it ends (null for a clean end, else the error; a status other than 200 is a
   * {@link WatchStatusError}). Resolves once the server answered (or the request failed).
   */
  async watch(
    path: string,
    onLine: (line: string) => Error | undefined,
    onDone: (err: unknown) => void,
  ): Promise<KubeStream> {
    const { g, headers } = await this.prepare();
    let finished = false;
    let controller: Dispatcher.DispatchController | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
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
      let pending = "";
      const line = (text: string) => {
        if (finished || text.trim() === "") return;
        const err = onLine(text);
        if (err) {
          finish(err);
          controller?.abort(err);
        }
      };
      g.dispatcher.dispatch(
        {
          origin: g.origin,
          path: g.prefix + path,
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
          },
          onResponseStart(_c, code) {
            status = code;
            resolve(handle);
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
            if (status === 200) {
              line(pending);
              finish(null);
            } else {
              finish(new WatchStatusError(status, pending));
            }
          },
          onResponseError(_c, err) {
            finish(err);
            resolve(handle);
          },
        },
      );
    });
  }

  /** The current dispatcher for the request's TLS options (a new one when they changed), and its headers. */
  private async prepare(): Promise<{ g: Generation; headers: Record<string, string | string[]> }> {
    const c = await this.currentCredentials();
    let g = this.current;
    if (g && (g.dispatcher.closed || g.dispatcher.destroyed)) g = undefined;
    if (g && g.tls !== c.tls) {
      // The same material read again is kept: later requests match it by identity.
      if (TLS_FIELDS.every((f) => sameValue(g?.tls[f], c.tls[f]))) g.tls = c.tls;
      else void g.dispatcher.close();
      if (g.tls !== c.tls) g = undefined;
    }
    if (!g) {
      // Requests that find no dispatcher at once share the one being made.
      this.connecting ??= this.connect(c).finally(() => {
        this.connecting = undefined;
      });
      g = await this.connecting;
    }
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

  /** A new current dispatcher for `c` (kube-connection.ts). */
  private async connect(c: RequestCredentials): Promise<Generation> {
    const g = await connect(
      this.config,
      this.options,
      c.tls,
      c.allowH2,
      ++this.generations,
      (old) => {
        if (this.current !== old) return;
        this.current = undefined;
        retire(old);
      },
    );
    this.current = g;
    return g;
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  return a === b;
}
