import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import { connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SocksProxy } from "../../test/support/socks-proxy.js";
import { TcpProxy } from "../../test/support/tcp-proxy.js";
import { generateCerts } from "../controlplane/certs.js";
import { freePort } from "../controlplane/controlplane.js";
import type { KubeConfigLike } from "./kube-credentials.js";
import {
  WatchCutMidEventError,
  WatchDecodeError,
  WatchHeldError,
  WatchNotAnsweredError,
  WatchStatusError,
} from "./kube-errors.js";
import { KubeTransport } from "./kube-transport.js";

let dir: string;
let key: Buffer;
let cert: Buffer;
let ca: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-transport-"));
  const certs = await generateCerts(dir);
  key = await readFile(certs.serverKey);
  cert = await readFile(certs.serverCert);
  ca = await readFile(certs.caCert);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Seen {
  version: string;
  url: string;
  userAgent: string | undefined;
  authorization: string | undefined;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Answers each request with what it saw; records it too. */
function echo(seen: Seen[]): Handler {
  return (req, res) => {
    const s = {
      version: req.httpVersion,
      url: req.url ?? "",
      userAgent: req.headers["user-agent"],
      authorization: req.headers.authorization,
    };
    seen.push(s);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(s));
  };
}

/** Listens on loopback; resolves with the port. The server closes after the test. */
async function listen(
  server: Server | http2.Http2SecureServer,
  address = "127.0.0.1",
): Promise<number> {
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, address, r));
  closers.push(
    () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(r);
      }),
  );
  return (server.address() as { port: number }).port;
}

function config(server: string, extra: { proxyUrl?: string } = {}): KubeConfigLike {
  return {
    getCurrentCluster: () => ({ server, ...extra }),
    applyToHTTPSOptions: async (o: object) => {
      Object.assign(o, { ca, headers: { Authorization: "Bearer t0ken" } });
    },
  };
}

function transport(c: KubeConfigLike, options = {}): KubeTransport {
  const t = new KubeTransport(c, options);
  closers.push(() => t.connections.close());
  return t;
}

/**
 * A watch open, then a request the server holds and one sent after it; the server
 * answers the first and sends a GOAWAY naming it the last stream processed, as
 * kube-apiserver's --goaway-chance does: the second must be answered within 3 s, on
 * the connection that later requests use (the current one, not the retired one's).
 */
async function unprocessedAfterGoaway(configFor: (port: number) => Promise<KubeConfigLike>) {
  let held: http2.ServerHttp2Stream | undefined;
  let goneAway = false;
  const sessionOf = new Map<string, unknown>();
  const server = http2.createSecureServer({ key, cert });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    const path = String(headers[":path"]);
    sessionOf.set(path, stream.session);
    if (path.includes("watch=true")) return stream.respond({ ":status": 200 });
    if (path === "/first") {
      held = stream;
      return;
    }
    if (path === "/second" && held && !goneAway) {
      // As kube-apiserver's --goaway-chance: /first answered and named the last stream
      // processed; /second, sent meanwhile, is left unprocessed.
      goneAway = true;
      held.respond({ ":status": 200 });
      held.end("{}");
      stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, held.id);
      return;
    }
    stream.respond({ ":status": 200 });
    stream.end("{}");
  });
  const port = await listen(server);
  const t = transport(await configFor(port));
  const watch = await t.watch(
    "/api/v1/pods",
    {},
    () => undefined,
    () => undefined,
  );
  const first = t.request("GET", "/first");
  await vi.waitFor(() => expect(held).toBeDefined());
  const second = t.request("PATCH", "/second", "{}");
  expect((await first).status).toBe(200);
  const late = new Promise<string>((r) => setTimeout(() => r("no answer within 3 s"), 3_000));
  expect(await Promise.race([second.then((a) => a.status), late])).toBe(200);
  expect((await t.request("GET", "/third")).status).toBe(200);
  expect(sessionOf.get("/second")).not.toBe(sessionOf.get("/first"));
  expect(sessionOf.get("/second")).toBe(sessionOf.get("/third"));
  watch.abort();
}

/**
 * An HTTP/2 server that sends GOAWAY as kube-apiserver's --goaway-chance does (an
 * answer, and a GOAWAY naming its stream the last processed), on cue: on the first
 * session, `/hold` is held until `/goaway` comes, which answers the held one with the
 * GOAWAY (so `/goaway` itself is left unprocessed); on every later session, each answer.
 * A watch stays open; `/slow` is answered 500 ms after it came; anything else at once.
 * With `idleGoawayMs`, a later session also gets a GOAWAY that long after it began, as a
 * server closing an idle connection (naming stream 0 when it carried none).
 */
async function goawayServer(idleGoawayMs?: number) {
  const seen: { method: string; path: string; session: number }[] = [];
  const sessions: http2.ServerHttp2Session[] = [];
  let held: http2.ServerHttp2Stream | undefined;
  const server = http2.createSecureServer({ key, cert });
  server.on("session", (s) => {
    sessions.push(s);
    if (idleGoawayMs !== undefined && sessions.length > 1) {
      setTimeout(() => s.goaway(http2.constants.NGHTTP2_NO_ERROR), idleGoawayMs);
    }
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    const path = String(headers[":path"]);
    const session = sessions.indexOf(stream.session as http2.ServerHttp2Session);
    seen.push({ method: String(headers[":method"]), path, session });
    const answer = (s: http2.ServerHttp2Stream) => {
      if (s.destroyed) return;
      s.respond({ ":status": 200 });
      s.end("{}");
    };
    if (path.includes("watch=true")) return stream.respond({ ":status": 200 });
    if (path === "/slow") return void setTimeout(() => answer(stream), 500);
    if (path === "/hold") {
      held = stream;
      return;
    }
    if (path === "/goaway" && session === 0 && held) {
      answer(held);
      stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, held.id);
      return;
    }
    answer(stream);
    if (session > 0) stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
  });
  const port = await listen(server);
  const t = transport(config(`https://127.0.0.1:${port}`));
  // A request first: the watch's stream is not the first of its session.
  await t.request("GET", "/api");
  let watchEnded: unknown = "running";
  await t.watch(
    "/api/v1/pods",
    {},
    () => undefined,
    (err) => {
      watchEnded = err;
    },
  );
  return { t, seen, held: () => held, watch: () => watchEnded };
}

/** Sends `/hold`, then `/goaway` once the server holds it; resolves with both answers' statuses. */
async function goaway(t: KubeTransport, held: () => unknown): Promise<number[]> {
  const hold = t.request("GET", "/hold");
  await vi.waitFor(() => expect(held()).toBeDefined());
  const unprocessed = t.request("PATCH", "/goaway", "{}");
  return [(await hold).status, (await unprocessed).status];
}

const USER_AGENT = /^aidc-operator\/\d+\.\d+\.\d+\S* \([a-z0-9]+\/[a-z0-9]+\) [0-9a-f]+|unknown$/;

describe("KubeTransport", () => {
  it("speaks HTTP/2 when the server offers it, under the server URL's path, with User-Agent and token", async () => {
    const seen: Seen[] = [];
    const port = await listen(http2.createSecureServer({ key, cert }, echo(seen) as never));
    const t = transport(config(`https://127.0.0.1:${port}/k8s/clusters/c-abc/`));
    const answer = await t.request("GET", "/api/v1/namespaces?limit=500");
    expect(answer.status).toBe(200);
    expect(seen).toEqual([
      {
        version: "2.0",
        url: "/k8s/clusters/c-abc/api/v1/namespaces?limit=500",
        userAgent: expect.stringMatching(USER_AGENT),
        authorization: "Bearer t0ken",
      },
    ]);
  });

  it("falls back to HTTP/1.1 behind a TLS front that speaks only HTTP/1.1, watches included", async () => {
    const seen: Seen[] = [];
    const port = await listen(
      https.createServer({ key, cert }, (req, res) => {
        if (!req.url?.includes("watch=true")) return echo(seen)(req, res);
        res.write('{"type":"ADDED","object":{"n":1}}\n{"type":"ADD');
        setTimeout(() => res.end('ED","object":{"n":2}}\n'), 50);
      }),
    );
    const t = transport(config(`https://127.0.0.1:${port}/prefix`));
    expect((await t.request("GET", "/api")).status).toBe(200);
    expect(seen[0]?.version).toBe("1.1");
    expect(seen[0]?.url).toBe("/prefix/api");
    const events: unknown[] = [];
    const done = new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, (type, obj) => events.push([type, obj]), resolve);
    });
    expect(await done).toBeNull();
    expect(events).toEqual([
      ["ADDED", { n: 1 }],
      ["ADDED", { n: 2 }],
    ]);
  });

  it("does not take a watch answered with an error for answered before it ended: its page comes after its head", async () => {
    const port = await listen(
      http.createServer((_req, res) => {
        // A front whose API server is down, its page sent after its head (as over HTTP/2).
        res.writeHead(502, { "content-type": "text/html" }).flushHeaders();
        setTimeout(() => res.end("<html><title>502 Bad Gateway</title></html>"), 50);
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`));
    const order: string[] = [];
    const watching = t.watch(
      "/api/v1/pods",
      {},
      () => undefined,
      (err) => order.push(`ended: ${(err as WatchStatusError).front}`),
    );
    await watching;
    order.push("answered");
    await vi.waitFor(() => expect(order).toHaveLength(2));
    expect(order).toEqual([
      'ended: 502 Bad Gateway from a proxy in front of the API server, not from the API server: "502 Bad Gateway"',
      "answered",
    ]);
  });

  it("ends a watch answered with an error whose page does not end within the request timeout", async () => {
    const port = await listen(
      http.createServer((_req, res) => {
        res.writeHead(502, { "content-type": "text/html" }).flushHeaders();
        res.write("<html>");
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`), { requestTimeoutMs: 200 });
    let ended: unknown;
    await t.watch(
      "/api/v1/pods",
      {},
      () => undefined,
      (err) => {
        ended = err;
      },
    );
    expect(ended).toBeInstanceOf(WatchStatusError);
    expect((ended as WatchStatusError).statusCode).toBe(502);
  });

  it("ends a watch with a WatchDecodeError at a line that is not an event", async () => {
    const port = await listen(
      http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"type":"ADDED","object":{"n":1}}\n');
        res.write("<html>proxy error</html>\n");
        res.write('{"type":"ADDED","object":{"n":2}}\n');
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`));
    const events: unknown[] = [];
    const done = new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, (_type, obj) => events.push(obj), resolve);
    });
    expect(await done).toBeInstanceOf(WatchDecodeError);
    expect(events).toEqual([{ n: 1 }]);
  });

  it("ends an answered watch cleanly when a front closes its connection (an idle timeout), as client-go resumes it", async () => {
    const port = await listen(
      http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"type":"ADDED","object":{"n":1}}\n');
        // As nginx's proxy_read_timeout or haproxy's timeout server: no last chunk.
        setTimeout(() => res.socket?.destroy(), 50);
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`));
    const events: unknown[] = [];
    const done = new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, (_type, obj) => events.push(obj), resolve);
    });
    expect(await done).toBeNull();
    expect(events).toEqual([{ n: 1 }]);
  });

  it("ends a watch cut inside an event with a WatchCutMidEventError (relist) that names the front", async () => {
    const port = await listen(
      http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        // As nginx with proxy_buffering when proxy_read_timeout cuts a watch: what filled
        // its first buffer passes, the rest of the event is lost.
        res.write('{"type":"ADDED","object":{"n":1}}\n{"type":"MODIFIED","obj');
        setTimeout(() => res.socket?.destroy(), 50);
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`));
    const events: unknown[] = [];
    const done = await new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, (_type, obj) => events.push(obj), resolve);
    });
    expect(done).toBeInstanceOf(WatchCutMidEventError);
    expect(done).toMatchObject({ relist: true, cause: { code: "UND_ERR_SOCKET" } });
    expect(String(done)).toBe(
      "WatchCutMidEventError: watch of /api/v1/pods was cut 23 bytes into an event: a proxy in front of the API server may be holding streamed answers (nginx: proxy_buffering off)",
    );
    expect(events).toEqual([{ n: 1 }]);
  });

  it("ends a watch whose answer a front let through only as it cut it with a WatchHeldError (relist): nginx 1.22 over HTTP/1.1", async () => {
    const port = await listen(
      http.createServer((_req, res) => {
        // As nginx with proxy_buffering at proxy_read_timeout: what it held, then the cut.
        setTimeout(() => {
          res.writeHead(200, { "content-type": "application/json" });
          res.write('{"type":"ADDED","object":{"n":1}}\n', () => res.socket?.destroy());
        }, 1_100);
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`));
    const events: unknown[] = [];
    const done = await new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, (_type, obj) => events.push(obj), resolve);
    });
    expect(done).toBeInstanceOf(WatchHeldError);
    expect(done).toMatchObject({ relist: true, cause: { code: "UND_ERR_SOCKET" } });
    expect(String(done)).toBe(
      "WatchHeldError: watch of /api/v1/pods was held back 1 s by a front and let through only when it was cut: changes reach the operator that late (nginx: proxy_buffering off)",
    );
    expect(events).toEqual([{ n: 1 }]);
  });

  it("ends a watch answered at once and cut just after its first event, a second later, as an idle cut (resumed), not a held one", async () => {
    // An API server (or a proxy to it) stopping just after a change: no front held it.
    const port = await listen(
      http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" }).flushHeaders();
        setTimeout(() => {
          res.write('{"type":"ADDED","object":{"n":1}}\n', () => res.socket?.destroy());
        }, 1_100);
      }),
    );
    const t = transport(config(`http://127.0.0.1:${port}`));
    const events: unknown[] = [];
    const done = await new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, (_type, obj) => events.push(obj), resolve);
    });
    expect(done).toBeNull();
    expect(events).toEqual([{ n: 1 }]);
  });

  it("ends a watch a front held unanswered with a WatchNotAnsweredError (relist) that names the front, and one cut at once with its own error", async () => {
    // As nginx with proxy_buffering: the API server's headers and events held back,
    // until the client gives up (here) or the front's proxy_read_timeout cuts it.
    const holding = await listen(http.createServer(() => undefined));
    const t = transport(config(`http://127.0.0.1:${holding}`), { requestTimeoutMs: 1_000 });
    const held = await new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, () => undefined, resolve);
    });
    expect(held).toBeInstanceOf(WatchNotAnsweredError);
    expect(held).toMatchObject({ relist: true, cause: { code: "UND_ERR_HEADERS_TIMEOUT" } });
    expect(String(held)).toMatch(
      /^WatchNotAnsweredError: watch of \/api\/v1\/pods got no answer in \d+ s: a proxy .* \(nginx: proxy_buffering off\)$/,
    );

    // A connection closed at once is a way to the server failing, not a front holding.
    const closing = await listen(http.createServer((req) => req.socket.destroy()));
    const cut = await new Promise((resolve) => {
      void transport(config(`http://127.0.0.1:${closing}`)).watch("/api", {}, () => {}, resolve);
    });
    expect(cut).toMatchObject({ code: "UND_ERR_SOCKET" });
    expect(cut).not.toBeInstanceOf(WatchNotAnsweredError);
  });

  it("speaks plain HTTP to an http:// server (kubectl proxy)", async () => {
    const seen: Seen[] = [];
    const port = await listen(http.createServer(echo(seen)));
    const t = transport(config(`http://127.0.0.1:${port}`));
    expect((await t.request("POST", "/api/v1/namespaces", "{}")).status).toBe(200);
    expect(seen[0]?.version).toBe("1.1");
  });

  it("opens another connection when the server's stream limit is reached, and only then", async () => {
    const sessions: unknown[] = [];
    const server = http2.createSecureServer({ key, cert, settings: { maxConcurrentStreams: 3 } });
    server.on("session", (s) => sessions.push(s));
    server.on("stream", (stream, headers) => {
      stream.respond({ ":status": 200 });
      // Watches stay open, silent; anything else answers.
      if (!String(headers[":path"]).includes("watch=true")) stream.end("{}");
    });
    const port = await listen(server);
    const t = transport(config(`https://127.0.0.1:${port}`));
    await t.request("GET", "/api");
    const watches = await Promise.all(
      [1, 2, 3].map(() =>
        t.watch(
          "/api/v1/pods",
          {},
          () => undefined,
          () => undefined,
        ),
      ),
    );
    expect(sessions).toHaveLength(1);
    // The fourth stream would wait behind three watches: it gets a connection of its own.
    expect((await t.request("GET", "/api")).status).toBe(200);
    expect(sessions).toHaveLength(2);
    for (const w of watches) w.abort();
  });

  it("tears down a connection whose PING goes unanswered, ending what runs on it", async () => {
    const server = http2.createSecureServer({ key, cert });
    server.on("stream", (stream) => stream.respond({ ":status": 200 }));
    const port = await listen(server);
    const tcp = new TcpProxy(port);
    const proxyPort = await tcp.start();
    closers.push(() => tcp.stop());
    const t = transport(config(`https://127.0.0.1:${proxyPort}`), { pingIntervalMs: 200 });
    const ended = new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, () => undefined, resolve);
    });
    await new Promise((r) => setTimeout(r, 500)); // pings answered: the watch stays
    tcp.freeze();
    const started = Date.now();
    // An answered watch ends as one a front cut: its informer resumes it on a new connection.
    expect(await ended).toBeNull();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("retries a stream the server refused, once", async () => {
    let streams = 0;
    const server = http2.createSecureServer({ key, cert });
    server.on("stream", (stream) => {
      stream.on("error", () => undefined);
      if (++streams === 1) return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      stream.respond({ ":status": 200 });
      stream.end("{}");
    });
    const port = await listen(server);
    const t = transport(config(`https://127.0.0.1:${port}`));
    expect((await t.request("GET", "/api")).status).toBe(200);
    expect(streams).toBe(2);
  });

  it("sends new requests on a new connection after a GOAWAY, while watches finish on the old", async () => {
    let sessions = 0;
    const server = http2.createSecureServer({ key, cert });
    server.on("session", () => sessions++);
    server.on("stream", (stream, headers) => {
      stream.on("error", () => undefined);
      const path = String(headers[":path"]);
      if (path.includes("watch=true")) return stream.respond({ ":status": 200 });
      // As kube-apiserver answers a token it refuses: 401, and GOAWAY.
      if (path === "/refused") {
        stream.respond({ ":status": 401 });
        stream.end("{}");
        stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
        return;
      }
      stream.respond({ ":status": 200 });
      stream.end("{}");
    });
    const port = await listen(server);
    const t = transport(config(`https://127.0.0.1:${port}`));
    const watch = await t.watch(
      "/api/v1/pods",
      {},
      () => undefined,
      () => undefined,
    );
    expect((await t.request("GET", "/refused")).status).toBe(401);
    const started = Date.now();
    expect((await t.request("GET", "/api")).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(sessions).toBe(2);
    watch.abort();
  });

  it("sends the requests a GOAWAY left unprocessed on the current connection, not behind the watches still open", async () => {
    await unprocessedAfterGoaway(async (port) => config(`https://127.0.0.1:${port}`));
  });

  it("drops a generation on request: what ran on it fails, the next request connects anew", async () => {
    let sessions = 0;
    const server = http2.createSecureServer({ key, cert });
    server.on("session", () => sessions++);
    server.on("stream", (stream, headers) => {
      stream.respond({ ":status": 200 });
      if (!String(headers[":path"]).includes("watch=true")) stream.end("{}");
    });
    const port = await listen(server);
    const t = transport(config(`https://127.0.0.1:${port}`));
    const first = t.connections.generation();
    const ended = new Promise((resolve) => {
      void t.watch("/api/v1/pods", {}, () => undefined, resolve);
    });
    await t.request("GET", "/api");
    expect(t.connections.generation()).toBe(first);
    expect(t.connections.drop(first + 1)).toBe(false);
    expect(t.connections.drop(first)).toBe(true);
    expect(await ended).toBeInstanceOf(Error);
    await t.request("GET", "/api");
    expect(t.connections.generation()).toBe(first + 1);
    expect(sessions).toBe(2);
  });

  it("connects anew when the TLS material changed (a rotated CA)", async () => {
    let sessions = 0;
    const server = http2.createSecureServer({ key, cert }, echo([]) as never);
    server.on("session", () => sessions++);
    const port = await listen(server);
    let current = ca;
    const t = transport({
      getCurrentCluster: () => ({ server: `https://127.0.0.1:${port}` }),
      applyToHTTPSOptions: async (o: object) => {
        Object.assign(o, { ca: current });
      },
    });
    await t.request("GET", "/api");
    await t.request("GET", "/api");
    expect(sessions).toBe(1);
    current = Buffer.concat([ca, Buffer.from("\n")]);
    await t.request("GET", "/api");
    expect(sessions).toBe(2);
  });

  it("reads credentials per request, or again only once the config's max age passed or after a 401", async () => {
    const port = await listen(http2.createSecureServer({ key, cert }, echo([]) as never));
    const reads = { perRequest: 0, inline: 0, files: 0 };
    const maxAges = { perRequest: undefined, inline: Number.POSITIVE_INFINITY, files: 60_000 };
    const transports = Object.fromEntries(
      (["perRequest", "inline", "files"] as const).map((kind) => [
        kind,
        transport({
          getCurrentCluster: () => ({ server: `https://127.0.0.1:${port}` }),
          applyToHTTPSOptions: async (o: object) => {
            reads[kind]++;
            Object.assign(o, { ca, headers: { Authorization: "Bearer t0ken" } });
          },
          ...(maxAges[kind] === undefined ? {} : { credentialsMaxAgeMs: maxAges[kind] }),
        }),
      ]),
    );
    const threeEach = async () => {
      for (const t of Object.values(transports)) {
        for (let i = 0; i < 3; i++) expect((await t.request("GET", "/api")).status).toBe(200);
      }
    };
    await threeEach();
    expect(reads).toEqual({ perRequest: 3, inline: 1, files: 1 });
    // Only Date is faked: the sockets' timers run as usual.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      await threeEach();
    } finally {
      vi.useRealTimers();
    }
    expect(reads).toEqual({ perRequest: 6, inline: 1, files: 2 });
    for (const t of Object.values(transports)) t.refreshCredentials();
    await threeEach();
    expect(reads).toEqual({ perRequest: 9, inline: 2, files: 3 });
  });

  describe("through an HTTP CONNECT proxy", () => {
    /**
     * A CONNECT proxy that sends every tunnel to `port` on loopback, whatever host was
     * asked; an https:// one (the server's certificate) with `tls`, listening on `address`.
     */
    async function connectProxy(
      port: number,
      asked: string[],
      { tls = false, address = "127.0.0.1" } = {},
    ): Promise<number> {
      const refuse: Handler = (_req, res) => res.writeHead(405).end();
      const proxy = tls ? https.createServer({ key, cert }, refuse) : http.createServer(refuse);
      proxy.on("connect", (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
        asked.push(req.url ?? "");
        const upstream = connect(port, "127.0.0.1", () => {
          socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
          upstream.write(head);
          upstream.pipe(socket);
          socket.pipe(upstream);
        });
        upstream.on("error", () => socket.destroy());
        socket.on("error", () => upstream.destroy());
      });
      return listen(proxy, address);
    }

    it("goes through the kubeconfig's proxy-url", async () => {
      const seen: Seen[] = [];
      const port = await listen(http2.createSecureServer({ key, cert }, echo(seen) as never));
      const asked: string[] = [];
      const proxy = await connectProxy(port, asked);
      const t = transport(
        config(`https://127.0.0.1:${port}`, { proxyUrl: `http://127.0.0.1:${proxy}` }),
      );
      expect((await t.request("GET", "/api")).status).toBe(200);
      expect(asked).toEqual([`127.0.0.1:${port}`]);
      expect(seen[0]?.version).toBe("2.0");
    });

    it("goes through an https:// one named by an IPv6 address, its certificate checked for that address", async () => {
      const seen: Seen[] = [];
      const port = await listen(http2.createSecureServer({ key, cert }, echo(seen) as never));
      const asked: string[] = [];
      const proxy = await connectProxy(port, asked, { tls: true, address: "::1" });
      const t = transport(
        config(`https://127.0.0.1:${port}`, { proxyUrl: `https://[::1]:${proxy}` }),
      );
      expect((await t.request("GET", "/api")).status).toBe(200);
      expect(asked).toEqual([`127.0.0.1:${port}`]);
    });

    it("sends the requests a GOAWAY left unprocessed through it on the current tunnel", async () => {
      await unprocessedAfterGoaway(async (port) =>
        config(`https://127.0.0.1:${port}`, {
          proxyUrl: `http://127.0.0.1:${await connectProxy(port, [])}`,
        }),
      );
    });

    it("goes through HTTPS_PROXY for a server not named by NO_PROXY", async () => {
      const seen: Seen[] = [];
      const port = await listen(https.createServer({ key, cert }, echo(seen)));
      const asked: string[] = [];
      const proxy = await connectProxy(port, asked);
      // A name only the proxy can resolve: reached at all means reached through it.
      const c: KubeConfigLike = {
        getCurrentCluster: () => ({ server: `https://kube-apiserver.test:${port}` }),
        applyToHTTPSOptions: async (o: object) => {
          Object.assign(o, { ca, servername: "localhost" });
        },
      };
      const env = { HTTPS_PROXY: `127.0.0.1:${proxy}`, NO_PROXY: "other.test" };
      const t = transport(c, { env });
      expect((await t.request("GET", "/api")).status).toBe(200);
      expect(asked).toEqual([`kube-apiserver.test:${port}`]);
    });
  });

  describe("through an HTTP proxy that cannot be reached", () => {
    it.each([
      ["the kubeconfig's proxy-url", "https://127.0.0.1:6443", "proxyUrl"],
      ["HTTPS_PROXY", "https://kube-apiserver.test:6443", "HTTPS_PROXY"],
      ["HTTP_PROXY", "http://kube-apiserver.test:8001", "HTTP_PROXY"],
    ])(
      "fails requests and watches saying which proxy, named by %s, without its password",
      async (where, server, setting) => {
        const port = await freePort();
        const proxy = `http://aidc:s3cret@127.0.0.1:${port}`;
        const extra = setting === "proxyUrl" ? { proxyUrl: proxy } : {};
        const t = transport(config(server, extra), { env: { [setting]: proxy } });
        const said = `the proxy http://127.0.0.1:${port} of ${where} cannot be reached: connect ECONNREFUSED 127.0.0.1:${port}`;
        const failed = await t.request("GET", "/api").catch((err: unknown) => err);
        expect(failed).toMatchObject({ message: said, code: "ECONNREFUSED" });
        const watched = await new Promise((resolve) => {
          void t.watch("/api/v1/pods", {}, () => undefined, resolve);
        });
        expect(watched).toMatchObject({ message: said });
        expect(JSON.stringify(pino.stdSerializers.err(failed as Error))).not.toContain("s3cret");
      },
    );

    it("fails a request saying the proxy cannot reach the server when it answers the CONNECT 503 (squid, the server down)", async () => {
      const proxy = http.createServer((_req, res) => res.writeHead(405).end());
      proxy.on("connect", (_req: http.IncomingMessage, socket: Socket) => {
        socket.end("HTTP/1.1 503 Service Unavailable\r\n\r\n");
      });
      const port = await listen(proxy);
      const t = transport(
        config("https://127.0.0.1:6443", { proxyUrl: `http://127.0.0.1:${port}` }),
      );
      const failed = await t.request("GET", "/api").catch((err: unknown) => err);
      expect((failed as Error).message).toBe(
        `the proxy http://127.0.0.1:${port} of the kubeconfig's proxy-url cannot reach the server: it answered 503 to CONNECT`,
      );
    });
  });

  describe("through a SOCKS5 proxy", () => {
    /** A SOCKS5 proxy on loopback `address` that asks for `aidc:p@ss`; stopped after the test. */
    async function socksProxy(address: string): Promise<SocksProxy> {
      const socks = new SocksProxy({ "kube-apiserver.test": "127.0.0.1" }, "aidc:p@ss");
      await socks.start(address);
      closers.push(() => socks.stop());
      return socks;
    }

    /** `server` as a kubeconfig names it, its certificate checked for `localhost`. */
    const named = (server: string, extra: { proxyUrl?: string } = {}): KubeConfigLike => ({
      getCurrentCluster: () => ({ server, ...extra }),
      applyToHTTPSOptions: async (o: object) => {
        Object.assign(o, { ca, servername: "localhost" });
      },
    });

    it("goes through one named by an IPv6 address, as proxy-url and as HTTPS_PROXY, over HTTP/2", async () => {
      const seen: Seen[] = [];
      const port = await listen(
        http2.createSecureServer({ key, cert, allowHTTP1: true }, echo(seen) as never),
      );
      const socks = await socksProxy("::1");
      const proxy = socks.url.replace("socks5://", "socks5://aidc:p%40ss@");
      const server = `https://kube-apiserver.test:${port}`;
      const viaUrl = transport(named(server, { proxyUrl: proxy }));
      expect((await viaUrl.request("GET", "/api")).status).toBe(200);
      const env = { HTTPS_PROXY: proxy.replace("socks5:", "socks5h:") };
      const viaEnv = transport(named(server), { env });
      expect((await viaEnv.request("GET", "/api")).status).toBe(200);
      expect(socks.targets).toEqual([`kube-apiserver.test:${port}`, `kube-apiserver.test:${port}`]);
      expect(seen.map((s) => s.version)).toEqual(["2.0", "2.0"]);
    });

    it("reaches a server named by an IPv6 address through it", async () => {
      const seen: Seen[] = [];
      const port = await listen(
        http2.createSecureServer({ key, cert }, echo(seen) as never),
        "::1",
      );
      const socks = await socksProxy("127.0.0.1");
      const proxyUrl = socks.url.replace("socks5://", "socks5://aidc:p%40ss@");
      const t = transport(named(`https://[::1]:${port}`, { proxyUrl }));
      expect((await t.request("GET", "/api")).status).toBe(200);
      expect(socks.targets).toEqual([`0:0:0:0:0:0:0:1:${port}`]);
    });

    it("sends the requests a GOAWAY left unprocessed through it on the current tunnel", async () => {
      const socks = await socksProxy("127.0.0.1");
      const proxyUrl = socks.url.replace("socks5://", "socks5://aidc:p%40ss@");
      await unprocessedAfterGoaway(async (port) =>
        named(`https://kube-apiserver.test:${port}`, { proxyUrl }),
      );
      // The first, the current one, and the retired one's second (which carries nothing).
      expect(socks.tunnels).toBe(3);
    });

    it("keeps its tunnels alive with TCP keepalive, as a direct connection", async () => {
      const port = await listen(http2.createSecureServer({ key, cert }, echo([]) as never));
      const socks = await socksProxy("127.0.0.1");
      const proxyUrl = socks.url.replace("socks5://", "socks5://aidc:p%40ss@");
      const t = transport(named(`https://kube-apiserver.test:${port}`, { proxyUrl }));
      expect((await t.request("GET", "/api")).status).toBe(200);
      const proxyPort = Number(new URL(socks.url).port).toString(16).toUpperCase();
      /** The timer of each established connection to the proxy (Linux /proc/net/tcp: 02 is keepalive). */
      const timers = async () => {
        const port16 = `:${proxyPort.padStart(4, "0")}`;
        const rows = (await readFile("/proc/net/tcp", "utf8"))
          .split("\n")
          .map((l) => l.trim().split(/\s+/));
        return rows
          .filter((r) => r[2]?.endsWith(port16) && r[3] === "01")
          .map((r) => r[5]?.slice(0, 2));
      };
      await vi.waitFor(async () => expect(await timers()).toEqual(["02"]));
    });

    it("fails a request the proxy refuses (a wrong password) saying why, the password never said", async () => {
      const port = await listen(http2.createSecureServer({ key, cert }, echo([]) as never));
      const socks = await socksProxy("127.0.0.1");
      const proxyUrl = socks.url.replace("socks5://", "socks5://aidc:wr0ng-Pa55word@");
      const t = transport(named(`https://kube-apiserver.test:${port}`, { proxyUrl }));
      const err = await t.request("GET", "/api").then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toBe(
        `the proxy ${socks.url} of the kubeconfig's proxy-url refused the tunnel: Socks5 Authentication failed`,
      );
      expect(JSON.stringify(pino.stdSerializers.err(err as Error))).not.toMatch(/Pa55word/);
      expect(socks.tunnels).toBe(0);
    });
  });
});

describe("a request a GOAWAY left unprocessed", () => {
  it("is answered on the current connection, and the watches of the retired one keep running", async () => {
    const { t, seen, held, watch } = await goawayServer();
    expect(await goaway(t, held)).toEqual([200, 200]);
    // Sent again once, not on the retired connection's own second session.
    const sent = seen.filter((s) => s.path === "/goaway");
    expect(sent.length).toBe(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(watch()).toBe("running");
  });

  it("resumes a watch of the retired connection that undici ends at a GOAWAY on its idle second session", async () => {
    const { t, held, watch } = await goawayServer(300);
    expect(await goaway(t, held)).toEqual([200, 200]);
    await new Promise((r) => setTimeout(r, 600));
    // Ended as a cut (the informer resumes at once at its resourceVersion), not failed.
    expect(watch()).toBeNull();
  });

  it("does not send again a write the retired connection is still waiting the answer of", async () => {
    const { t, seen, held } = await goawayServer();
    const slow = t.request("PATCH", "/slow", "{}");
    await vi.waitFor(() => expect(seen.some((s) => s.path === "/slow")).toBe(true));
    expect(await goaway(t, held)).toEqual([200, 200]);
    expect((await slow).status).toBe(200);
    expect(seen.filter((s) => s.path === "/slow").length).toBe(1);
  });
});
