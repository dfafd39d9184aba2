/**
 * The service client's HTTP exchanges against a plain local server, both of them
 * (`service.httpClient`: node:http, http-exchange.ts, and node-fetch,
 * fetch-exchange.ts): what they send, what they read back, and how each way of getting
 * no usable answer fails (the transport maps these errors, transport-errors.ts).
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchExchange } from "./fetch-exchange.js";
import {
  type ExchangeRequest,
  exchange as httpExchange,
  parseRetryAfter,
  ResponseTooLargeError,
} from "./http-exchange.js";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
const handlers = new Map<string, Handler>();
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => {
    body += c.toString("utf8");
  });
  req.on("end", () => handlers.get(req.url ?? "")?.(req, body, res));
});
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  agent.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function request(path: string, extra: Partial<ExchangeRequest> = {}): ExchangeRequest {
  return {
    method: "GET",
    url: base + path,
    headers: { Accept: "application/json" },
    body: undefined,
    agent,
    timeoutMs: 2_000,
    maxBytes: 1_000,
    signal: undefined,
    ...extra,
  };
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error("expected the exchange to fail");
    },
    (err: Error) => err,
  );
}

describe.each([
  ["node-http", httpExchange],
  ["node-fetch", fetchExchange],
])("exchange over %s", (_client, exchange) => {
  it("sends method, headers and a body with its length; reads status, Retry-After and the body", async () => {
    handlers.set("/echo", (req, body, res) => {
      res.writeHead(429, { "Retry-After": "3", "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          method: req.method,
          auth: req.headers.authorization,
          body,
          length: req.headers["content-length"],
        }),
      );
    });
    const answer = await exchange(
      request("/echo", { method: "POST", headers: { Authorization: "Bearer k" }, body: '{"é":1}' }),
    );
    expect(answer.httpStatus).toBe(429);
    expect(answer.retryAfterMs).toBe(3000);
    expect(JSON.parse(answer.bodyText)).toEqual({
      method: "POST",
      auth: "Bearer k",
      body: '{"é":1}',
      length: "8",
    });
  });

  it.each([
    ["0", 0],
    ["120", 120_000],
    ["Wed, 21 Oct 2026 07:28:00 GMT", undefined],
    ["1.5", undefined],
  ])("reads a Retry-After of %j as %j ms (whole seconds only)", async (value, ms) => {
    const path = `/retry-after/${encodeURIComponent(value)}`;
    handlers.set(path, (_req, _body, res) => {
      res.writeHead(503, { "Retry-After": value });
      res.end("{}");
    });
    expect((await exchange(request(path))).retryAfterMs).toBe(ms);
  });

  it("returns a redirect with its Location and does not read its body", async () => {
    handlers.set("/moved", (_req, _body, res) => {
      res.writeHead(307, { Location: "http://elsewhere.invalid/x" });
      res.write("x".repeat(10_000));
    });
    const answer = await exchange(request("/moved"));
    expect(answer).toMatchObject({
      httpStatus: 307,
      location: "http://elsewhere.invalid/x",
      bodyText: "",
    });
  });

  it("decodes a gzip answer, the limit applying to the decoded body", async () => {
    handlers.set("/gzip", (_req, _body, res) => {
      res.writeHead(200, { "Content-Encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ ok: "yes" })));
    });
    expect((await exchange(request("/gzip"))).bodyText).toBe('{"ok":"yes"}');
    handlers.set("/gzip-big", (_req, _body, res) => {
      res.writeHead(200, { "Content-Encoding": "gzip" });
      res.end(gzipSync("x".repeat(5_000)));
    });
    expect(await failure(exchange(request("/gzip-big")))).toBeInstanceOf(ResponseTooLargeError);
  });

  it("cuts a body off past the limit", async () => {
    handlers.set("/big", (_req, _body, res) => {
      res.writeHead(200);
      res.write("x".repeat(800));
      res.write("x".repeat(800));
    });
    expect(await failure(exchange(request("/big")))).toBeInstanceOf(ResponseTooLargeError);
  });

  it("fails with a TimeoutError when no answer comes in time", async () => {
    handlers.set("/slow", () => undefined);
    const err = await failure(exchange(request("/slow", { timeoutMs: 100 })));
    expect(err.name).toBe("TimeoutError");
  });

  it("fails with an AbortError when the caller's signal aborts, before or during the exchange", async () => {
    handlers.set("/hang", () => undefined);
    const during = new AbortController();
    const pending = exchange(request("/hang", { signal: during.signal }));
    setTimeout(() => during.abort(new Error("stop")), 20);
    expect((await failure(pending)).name).toBe("AbortError");
    expect((await failure(exchange(request("/hang", { signal: AbortSignal.abort() })))).name).toBe(
      "AbortError",
    );
  });

  it("fails with ECONNRESET when the connection closes before the body ends", async () => {
    handlers.set("/cut", (_req, _body, res) => {
      res.writeHead(200, { "Content-Length": "100" });
      res.write("{");
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const err = (await failure(exchange(request("/cut")))) as NodeJS.ErrnoException;
    expect(err.code).toBe("ECONNRESET");
  });

  it("keeps Node's code of a connection that is refused", async () => {
    const err = (await failure(
      exchange(request("", { url: "http://127.0.0.1:1/x" })),
    )) as NodeJS.ErrnoException;
    expect(err.code).toBe("ECONNREFUSED");
  });
});

describe("the node:http exchange's mayCall", () => {
  it("is asked once the socket is connected, a pooled one too: when it says no, the connection is made but nothing is written on it", async () => {
    let requests = 0;
    let connections = 0;
    const counting = createServer((_req, res) => {
      requests += 1;
      res.end("{}");
    });
    counting.on("connection", () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => counting.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(counting.address() as AddressInfo).port}/x`;
    const pooled = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const stopped = await failure(
        httpExchange(request("", { url, agent: pooled, mayCall: () => false })),
      );
      expect(stopped.name).toBe("NotSentError");
      const sent = await httpExchange(request("", { url, agent: pooled, mayCall: () => true }));
      expect(sent.httpStatus).toBe(200);
      const again = await failure(
        httpExchange(request("", { url, agent: pooled, mayCall: () => false })),
      );
      expect(again.name).toBe("NotSentError");
      expect(requests).toBe(1);
      expect(connections).toBeGreaterThanOrEqual(2);
    } finally {
      pooled.destroy();
      counting.closeAllConnections();
      await new Promise((resolve) => counting.close(resolve));
    }
  });
});

describe("parseRetryAfter", () => {
  it.each([
    [" 2 ", 2000],
    ["0", 0],
    [null, undefined],
    ["", undefined],
    ["-1", undefined],
    ["2s", undefined],
    ["Wed, 21 Oct 2026 07:28:00 GMT", undefined],
  ])("reads %j as %j ms: only whole seconds, never a wait it cannot read", (value, ms) => {
    expect(parseRetryAfter(value)).toBe(ms);
  });
});
