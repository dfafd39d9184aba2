/**
 * The operator's one connection to the API server: an HTTP/2 session (node:http2)
 * carrying every request and watch of a {@link KubeClient} as streams, as client-go's
 * does. Plain requests and newline-delimited watch streams are all the operator sends,
 * so no generic HTTP client sits in between (client-node's request stack built a web
 * `Request`, a `Response` and web streams per call, and loading it cost ~80 MiB).
 *
 * Credentials come from a {@link KubeConfigLike} on every request: client-node's
 * `KubeConfig` (any auth it supports: tokens, client certificates, exec plugins,
 * in-cluster token files) or the operator's lean loader (kube-config.ts). When the TLS
 * material changes (a rotated client certificate, a new in-cluster CA) the next request
 * opens a new session and the old one closes once its streams are done; bearer tokens
 * are headers, set per request, so a rotated token needs no new connection.
 *
 * A session that dies silently (no FIN, no RST: a dropped NAT entry, a frozen peer)
 * would stall every request and watch until TCP gives up. The informer's watchdog
 * notices a silent watch first and calls {@link KubeHttp2.drop} with the generation the
 * watch ran on: the session is destroyed (failing the streams stuck on it, which are
 * retried) and the next request connects anew.
 */
import http2 from "node:http2";
import { StringDecoder } from "node:string_decoder";

/**
 * What the transport needs of a kubeconfig: the current cluster's server, and the TLS
 * options and headers of a request (client-node's `KubeConfig` has both).
 */
export interface KubeConfigLike {
  getCurrentCluster(): { server: string } | null;
  /** Fills `ca`, `cert`, `key`, `rejectUnauthorized`, `servername`, `headers`, `auth`. */
  applyToHTTPSOptions(opts: object): Promise<void>;
}

/** The TLS options that make two sessions different. */
const TLS_FIELDS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"];

type RequestOptions = Record<string, unknown> & {
  headers?: Record<string, unknown>;
  auth?: string;
};

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  return a === b;
}

/** An answer: the HTTP status and the body's text. */
export interface KubeHttpAnswer {
  status: number;
  text: string;
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

interface Session {
  http: http2.ClientHttp2Session;
  tls: Record<string, unknown>;
  generation: number;
  /** Streams open on it (requests keep the process alive; an idle session does not). */
  open: number;
}

/** One HTTP/2 session to the API server, shared by every request. See the module comment. */
export class KubeHttp2 {
  private session: Session | undefined;
  private generations = 0;

  constructor(private readonly config: KubeConfigLike) {}

  /** The generation of the current session, or of the next one (what a watch runs on), for {@link drop}. */
  generation(): number {
    const s = this.session;
    return s && !s.http.closed && !s.http.destroyed ? s.generation : this.generations + 1;
  }

  /**
   * Destroys the session of `generation` if it is still the current one (its streams
   * fail); true when one was destroyed.
   */
  drop(generation: number): boolean {
    const s = this.session;
    if (!s || s.generation !== generation) return false;
    this.session = undefined;
    s.http.destroy();
    return true;
  }

  /** Closes the session (after its streams end). */
  close(): void {
    const s = this.session;
    this.session = undefined;
    s?.http.close();
  }

  /** Sends one request; resolves with its status and body (any status). */
  async request(
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<KubeHttpAnswer> {
    const { session, headers } = await this.prepare();
    const stream = this.open(session, {
      ":method": method,
      ":path": path,
      accept: "application/json",
      ...headers,
      ...(body !== undefined ? { "content-type": contentType ?? "application/json" } : {}),
    });
    return new Promise((resolve, reject) => {
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
      });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString("utf8") }));
      stream.on("error", reject);
      stream.on("close", () => {
        if (status === 0 || stream.rstCode) {
          reject(new Error(`${method} ${path}: stream closed (HTTP/2 code ${stream.rstCode})`));
        }
      });
      stream.end(body);
    });
  }

  /**
   * Starts a watch (`path` with `watch=true` in its query): `onLine` gets each line of
   * the stream, `onDone` is called once when it ends (null for a clean end, else the
   * error; a status other than 200 is a {@link WatchStatusError}). Resolves once the
   * server answered (or the stream failed).
   */
  async watch(
    path: string,
    onLine: (line: string) => void,
    onDone: (err: unknown) => void,
  ): Promise<KubeStream> {
    const { session, headers } = await this.prepare();
    const stream = this.open(session, {
      ":method": "GET",
      ":path": path,
      accept: "application/json",
      ...headers,
    });
    let finished = false;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      onDone(err);
    };
    const handle = {
      abort: () => {
        finished = true;
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
    return new Promise((resolve) => {
      const decoder = new StringDecoder("utf8");
      let status = 0;
      let pending = "";
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        resolve(handle);
      });
      stream.on("data", (chunk: Buffer) => {
        pending += decoder.write(chunk);
        if (status !== 200) return;
        let nl = pending.indexOf("\n");
        while (nl >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.trim() !== "" && !finished) onLine(line);
          nl = pending.indexOf("\n");
        }
      });
      stream.on("end", () => {
        pending += decoder.end();
        if (status === 200) {
          if (pending.trim() !== "" && !finished) onLine(pending);
          finish(null);
        } else {
          finish(new WatchStatusError(status, pending));
        }
      });
      stream.on("error", (err) => {
        finish(err);
        resolve(handle);
      });
      stream.on("close", () => {
        finish(
          stream.rstCode ? new Error(`watch stream reset (HTTP/2 code ${stream.rstCode})`) : null,
        );
        resolve(handle);
      });
      stream.end();
    });
  }

  /** A stream on `session`; the session keeps the process alive while streams are open. */
  private open(session: Session, headers: http2.OutgoingHttpHeaders): http2.ClientHttp2Stream {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.http.request(headers, { endStream: false });
    } catch (err) {
      // E.g. stream ids exhausted, or the session closing: the next request connects anew.
      if (this.session === session) this.session = undefined;
      session.http.close();
      throw err;
    }
    if (session.open++ === 0) session.http.ref();
    stream.once("close", () => {
      if (--session.open === 0 && !session.http.destroyed) session.http.unref();
    });
    return stream;
  }

  /** The current session for the request's TLS options (a new one when they changed), and its headers. */
  private async prepare(): Promise<{ session: Session; headers: Record<string, string> }> {
    const opts: RequestOptions = { headers: {} };
    await this.config.applyToHTTPSOptions(opts);
    const tls: Record<string, unknown> = {};
    for (const f of TLS_FIELDS) if (opts[f] !== undefined) tls[f] = opts[f];
    let s = this.session;
    if (s && (s.http.closed || s.http.destroyed)) s = undefined;
    if (s && !TLS_FIELDS.every((f) => sameValue(s?.tls[f], tls[f]))) {
      // New TLS material: the old session finishes its streams and closes.
      s.http.close();
      s = undefined;
    }
    if (!s) s = this.connect(tls);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = String(v);
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return { session: s, headers };
  }

  private connect(tls: Record<string, unknown>): Session {
    const server = this.config.getCurrentCluster()?.server;
    if (!server) throw new Error("the kubeconfig has no current cluster");
    const http = http2.connect(server, tls as http2.SecureClientSessionOptions);
    const session: Session = { http, tls, generation: ++this.generations, open: 0 };
    // Errors reach the streams on it; the session is only forgotten.
    http.on("error", () => undefined);
    const forget = () => {
      if (this.session === session) this.session = undefined;
    };
    http.on("close", forget);
    http.on("goaway", forget);
    http.unref();
    this.session = session;
    return session;
  }
}
