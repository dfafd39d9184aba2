import { writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { leanObject } from "./cache.js";
import { KubeClient } from "./kube.js";
import { loadKubeConfig } from "./kube-config.js";
import {
  isConnectionReset,
  KubeApiError,
  ReconcileAbandonedError,
  retryWaitMs,
} from "./kube-errors.js";
import type { KubeClientOptions, KubeRequestInfo } from "./kube-options.js";
import { isKubeUnreachable, KubeUnreachableError } from "./kube-unreachable.js";
import { RuntimeMetrics } from "./metrics.js";
import type { ResourceDescriptor } from "./resource.js";

const CONFIGMAPS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};
const FAST = { qps: 1_000, burst: 1_000 };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-client-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A plain-HTTP API server on loopback and a client of it (token `t0ken`, or the token file's). */
async function serve(
  handler: Handler,
  user: object = { token: "t0ken" },
  options: KubeClientOptions = {},
) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => server.close(r)));
  server.on("connection", (s) => closers.push(() => s.destroy()));
  const port = (server.address() as { port: number }).port;
  const file = join(dir, `kubeconfig-${port}`);
  await writeFile(
    file,
    stringify({
      "current-context": "c",
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      clusters: [{ name: "c", cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: "u", user }],
    }),
  );
  return new KubeClient(await loadKubeConfig({ kubeconfig: file, env: {} }), {
    rateLimit: FAST,
    ...options,
  });
}

const json = (res: http.ServerResponse, code: number, body: unknown, headers = {}) => {
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const cm = (name: string) => ({ metadata: { name, namespace: "ns", resourceVersion: "1" } });

/** `request`, failed after `ms` if it has not settled by then (it found no seat free). */
function within<T>(ms: number, request: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: no seat free`)), ms);
  });
  return Promise.race([request, late]).finally(() => clearTimeout(timer));
}

describe("KubeClient against a loopback API server", () => {
  it("waits as a 429's Retry-After asks, then tries again", async () => {
    const times: number[] = [];
    const kube = await serve((_req, res) => {
      times.push(Date.now());
      if (times.length === 1) json(res, 429, { reason: "TooManyRequests" }, { "retry-after": "1" });
      else json(res, 200, cm("a"));
    });
    expect((await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" }))?.metadata?.name).toBe("a");
    expect(times).toHaveLength(2);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it("tries a request refused with 429 up to ten times more, as client-go does", async () => {
    let refusals = 10;
    let asked = 0;
    const kube = await serve((_req, res) => {
      asked++;
      if (refusals-- > 0) json(res, 429, { reason: "TooManyRequests" }, { "retry-after": "0" });
      else json(res, 200, cm("a"));
    });
    expect((await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" }))?.metadata?.name).toBe("a");
    expect(asked).toBe(11);
  });

  it("spreads the retries of requests refused together over half the wait again, none sooner than told", async () => {
    const refused: number[] = [];
    const retried: number[] = [];
    const kube = await serve((_req, res) => {
      if (refused.length < 16) {
        refused.push(Date.now());
        json(res, 429, { reason: "TooManyRequests" }, { "retry-after": "1" });
        return;
      }
      retried.push(Date.now());
      json(res, 200, cm("a"));
    });
    // The waits the client sets (arrival times on a loaded machine can only come later).
    const timers = vi.spyOn(globalThis, "setTimeout");
    let set: unknown[][] = [];
    try {
      await Promise.all(
        Array.from({ length: 16 }, () => kube.get(CONFIGMAPS, { namespace: "ns", name: "a" })),
      );
    } finally {
      set = [...timers.mock.calls];
      timers.mockRestore();
    }
    expect(retried).toHaveLength(16);
    const first = Math.min(...refused);
    expect(Math.min(...retried) - first).toBeGreaterThanOrEqual(990);
    const waits = set
      .map(([, ms]) => Number(ms))
      .filter((ms) => ms >= 900 && ms < 3_000) // its other timers are 3 s and longer
      .sort((a, b) => a - b);
    expect(waits, String(waits)).toHaveLength(16);
    expect(waits[0]).toBeGreaterThanOrEqual(1_000);
    expect(waits.at(-1)).toBeLessThanOrEqual(1_500);
    // 16 uniform draws over 500 ms: all within 100 ms of each other has odds below 1e-9.
    expect((waits.at(-1) ?? 0) - (waits[0] ?? 0)).toBeGreaterThan(100);
  });

  it("retries a GET's 503 with Retry-After, never a write's", async () => {
    let gets = 0;
    let posts = 0;
    const kube = await serve((req, res) => {
      if (req.method === "GET" && ++gets === 1) {
        return json(res, 503, { reason: "ServiceUnavailable" }, { "retry-after": "0" });
      }
      if (req.method === "POST") {
        posts++;
        return json(res, 503, { reason: "ServiceUnavailable" }, { "retry-after": "0" });
      }
      json(res, 200, cm("a"));
    });
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    expect(gets).toBe(2);
    await expect(kube.create(CONFIGMAPS, cm("b"))).rejects.toMatchObject({ code: 503 });
    expect(posts).toBe(1);
  });

  it("sends a reconcile's view's requests until the reconcile is abandoned, then none; its writes are the client's own", async () => {
    const sent: string[] = [];
    let version = 0;
    const kube = await serve((req, res) => {
      sent.push(`${req.method} ${req.url?.split("?")[0]}`);
      json(res, 200, { metadata: { name: "a", namespace: "ns", resourceVersion: `${++version}` } });
    });
    const abandon = new AbortController();
    const view = kube.forReconcile({ flow: "team-a", signal: abandon.signal });
    const written = await view.patch(CONFIGMAPS, { namespace: "ns", name: "a" }, {});
    expect(kube.isOwnWrite(CONFIGMAPS, written)).toBe(true);
    abandon.abort();
    await expect(
      view.patchStatus(CONFIGMAPS, { namespace: "ns", name: "a" }, { phase: "late" }),
    ).rejects.toBeInstanceOf(ReconcileAbandonedError);
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    expect(sent).toEqual([
      "PATCH /api/v1/namespaces/ns/configmaps/a",
      "GET /api/v1/namespaces/ns/configmaps/a",
    ]);
  });

  it("sends a reconcile's view's writes only while mayWrite (the Lease fence) says yes; its reads, and the client's own writes (the Lease's), still go", async () => {
    const sent: string[] = [];
    let mayWrite = true;
    const kube = await serve(
      (req, res) => {
        sent.push(`${req.method} ${req.url?.split("?")[0]?.split("/").pop()}`);
        json(res, 200, cm("a"));
      },
      undefined,
      { mayWrite: () => mayWrite },
    );
    const view = kube.forReconcile({ flow: "team-a", signal: new AbortController().signal });
    const key = { namespace: "ns", name: "a" };
    await view.patch(CONFIGMAPS, key, { data: { n: "1" } });
    mayWrite = false;
    await expect(view.patch(CONFIGMAPS, key, { data: { n: "2" } })).rejects.toBeInstanceOf(
      ReconcileAbandonedError,
    );
    await expect(view.create(CONFIGMAPS, cm("b"))).rejects.toBeInstanceOf(ReconcileAbandonedError);
    await view.get(CONFIGMAPS, key);
    await kube.patch(CONFIGMAPS, key, { data: { n: "3" } });
    expect(sent).toEqual(["PATCH a", "GET a", "PATCH a"]);
  });

  it("keeps at most maxInFlight requests at the server; a seat set free goes to the flow holding none before the backlog", async () => {
    const arrived: string[] = [];
    const held: (() => void)[] = [];
    let atServer = 0;
    let most = 0;
    const kube = await serve(
      (req, res) => {
        arrived.push(req.url?.split("?")[0]?.split("/").pop() as string);
        most = Math.max(most, ++atServer);
        held.push(() => {
          atServer--;
          json(res, 200, cm("x"));
        });
      },
      undefined,
      { maxInFlight: 2 },
    );
    const view = (flow: string) =>
      kube.forReconcile({ flow, signal: new AbortController().signal });
    const patch = (flow: string, name: string) =>
      view(flow).patch(CONFIGMAPS, { namespace: "ns", name }, {});
    const sent = ["b0", "b1", "b2", "b3", "b4"].map((name) => patch("backlog", name));
    const until = async (n: number) => {
      for (let i = 0; arrived.length < n; i++) {
        if (i > 200) throw new Error(`waited for ${n}: ${arrived.join(",")} most ${most}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await until(2);
    sent.push(patch("calm", "c0"));
    await new Promise((r) => setTimeout(r, 50));
    expect(arrived).toEqual(["b0", "b1"]);
    for (let answered = 0; answered < 4; answered++) {
      held.shift()?.();
      await until(answered + 3);
    }
    held.splice(0).forEach((answer) => {
      answer();
    });
    await Promise.all(sent);
    expect({ most, arrived }).toEqual({ most: 2, arrived: ["b0", "b1", "c0", "b2", "b3", "b4"] });
  });

  it("sends nothing for a reconcile abandoned while its request waited for a seat, and sets that seat free", async () => {
    const sent: string[] = [];
    const held: (() => void)[] = [];
    const kube = await serve(
      (req, res) => {
        const name = req.url?.split("?")[0]?.split("/").pop() as string;
        sent.push(`${req.method} ${name}`);
        if (name === "busy") held.push(() => json(res, 200, cm(name)));
        else json(res, 200, cm(name));
      },
      undefined,
      { maxInFlight: 1 },
    );
    const busy = kube.get(CONFIGMAPS, { namespace: "ns", name: "busy" });
    const abandon = new AbortController();
    const late = kube
      .forReconcile({ flow: "team-a", signal: abandon.signal })
      .patchStatus(CONFIGMAPS, { namespace: "ns", name: "late" }, { phase: "stale" });
    late.catch(() => undefined);
    // The busy request holds the one seat once it reaches the server (however loaded the
    // machine): only then is the late one waiting for a seat.
    for (let i = 0; held.length === 0; i++) {
      if (i > 1_000) throw new Error("the busy request never reached the server");
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 20));
    abandon.abort();
    held.shift()?.();
    await busy;
    await expect(late).rejects.toBeInstanceOf(ReconcileAbandonedError);
    await within(2_000, kube.get(CONFIGMAPS, { namespace: "ns", name: "next" }));
    expect(sent).toEqual(["GET busy", "GET next"]);
  });

  it("sets its one seat free however a request ends, and reports and records each try: an error status, a retry, a connection closed under a write", async () => {
    let tries = 0;
    const reported: KubeRequestInfo[] = [];
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const rest = metrics.kubeRequestMetrics("api", "requests");
    const kube = await serve(
      (req, res) => {
        const name = req.url?.split("?")[0]?.split("/").pop();
        if (req.method === "POST") return req.socket.destroy();
        if (name === "missing") return json(res, 404, { reason: "NotFound" });
        if (req.method === "PUT") return json(res, 409, { reason: "Conflict" });
        if (name === "busy" && ++tries === 1) {
          return json(res, 429, { reason: "TooManyRequests" }, { "retry-after": "0" });
        }
        json(res, 200, cm(name ?? ""));
      },
      undefined,
      { maxInFlight: 1, onRequest: (info) => reported.push(info), metrics: rest },
    );
    const key = (name: string) => ({ namespace: "ns", name });
    const closed = await within(2_000, kube.create(CONFIGMAPS, cm("new"))).catch((e) => e);
    expect(isConnectionReset(closed)).toBe(true);
    expect(await within(2_000, kube.get(CONFIGMAPS, key("missing")))).toBeUndefined();
    await expect(within(2_000, kube.replace(CONFIGMAPS, cm("a")))).rejects.toMatchObject({
      code: 409,
    });
    expect((await within(2_000, kube.get(CONFIGMAPS, key("busy"))))?.metadata?.name).toBe("busy");
    expect(await within(2_000, kube.get(CONFIGMAPS, key("last")))).toBeDefined();
    // Each try, with its status (0: no answer), as rest_client_requests_total counts them.
    expect(reported.map((r) => `${r.method} ${r.path.split("/").pop()} ${r.code}`)).toEqual([
      "POST configmaps 0",
      "GET missing 404",
      "PUT a 409",
      "GET busy 429",
      "GET busy 200",
      "GET last 200",
    ]);
    const text = await metrics.text();
    for (const [code, method, n] of [
      ["<error>", "POST", 1],
      ["404", "GET", 1],
      ["409", "PUT", 1],
      ["429", "GET", 1],
      ["200", "GET", 2],
    ]) {
      expect(text).toContain(
        `rest_client_requests_total{code="${code}",method="${method}",host="api"} ${n}`,
      );
    }
    expect(text).toContain('rest_client_request_duration_seconds_count{verb="GET",host="api"} 4');
    expect(text).toContain(
      'rest_client_rate_limiter_duration_seconds_count{verb="PUT",host="api",limiter="requests"} 1',
    );
  });

  it("gives up on a server that keeps answering 429, after a bounded number of tries", async () => {
    let tries = 0;
    const kube = await serve((_req, res) => {
      tries++;
      json(res, 429, { reason: "TooManyRequests" }, { "retry-after": "0" });
    });
    await expect(kube.get(CONFIGMAPS, { namespace: "ns", name: "a" })).rejects.toMatchObject({
      code: 429,
    });
    expect(tries).toBe(11);
  });

  it("reads the token file again at once after a 401 and tries once more", async () => {
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "old\n");
    const seen: string[] = [];
    let valid = "old";
    const kube = await serve(
      (req, res) => {
        seen.push(req.headers.authorization ?? "");
        if (req.headers.authorization === `Bearer ${valid}`) json(res, 200, cm("a"));
        else json(res, 401, { reason: "Unauthorized" });
      },
      // A token file wins over a static token, as in client-go.
      { token: "static", tokenFile },
    );
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    // Rotated: the old token is refused before a minute has passed.
    await writeFile(tokenFile, "new\n");
    valid = "new";
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    expect(seen).toEqual(["Bearer old", "Bearer old", "Bearer new"]);
    // A write refused with a token just rotated goes once more too (the server did nothing).
    await writeFile(tokenFile, "newest\n");
    valid = "newest";
    await kube.patch(CONFIGMAPS, { namespace: "ns", name: "a" }, {});
    expect(seen.slice(3)).toEqual(["Bearer new", "Bearer newest"]);
    // Refused again with the file's token: once more, then the 401 stands.
    valid = "newer";
    await expect(kube.get(CONFIGMAPS, { namespace: "ns", name: "a" })).rejects.toMatchObject({
      code: 401,
    });
    expect(seen).toHaveLength(7);
  });

  it("runs the exec plugin again after a 401 and tries once more", async () => {
    const counter = join(dir, "exec-runs");
    const script =
      `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; ` +
      `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s"}}' $n`;
    const seen: string[] = [];
    const kube = await serve(
      (req, res) => {
        seen.push(req.headers.authorization ?? "");
        json(
          res,
          req.headers.authorization === "Bearer tok-1" && seen.length > 1 ? 401 : 200,
          cm("a"),
        );
      },
      {
        exec: {
          apiVersion: "client.authentication.k8s.io/v1",
          command: "sh",
          args: ["-c", script],
          interactiveMode: "Never",
        },
      },
    );
    // Served without client-node.
    expect(kube.config.constructor.name).not.toBe("KubeConfig");
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    expect(seen).toEqual(["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]);
  });

  it("reads the token file again at once after a watch answered 401", async () => {
    const tokenFile = join(dir, "watch-token");
    await writeFile(tokenFile, "old");
    const seen: string[] = [];
    const kube = await serve(
      (req, res) => {
        seen.push(req.headers.authorization ?? "");
        if (req.headers.authorization === "Bearer new") return res.writeHead(200).end();
        // Rotated just now: the old token is refused before a minute has passed.
        writeFileSync(tokenFile, "new");
        json(res, 401, {});
      },
      { tokenFile },
    );
    const watch = () =>
      new Promise<unknown>((resolve) => {
        void kube.transport.watch("/api/v1/configmaps", {}, () => undefined, resolve);
      });
    expect(await watch()).toMatchObject({ statusCode: 401 });
    expect(await watch()).toBeNull();
    expect(seen).toEqual(["Bearer old", "Bearer new"]);
  });

  it("keeps the last token when the token file cannot be read again", async () => {
    const tokenFile = join(dir, "vanishing-token");
    await writeFile(tokenFile, "kept");
    const seen: string[] = [];
    const kube = await serve(
      (req, res) => {
        seen.push(req.headers.authorization ?? "");
        json(res, seen.length === 2 ? 401 : 200, cm("a"));
      },
      { tokenFile },
    );
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    await rm(tokenFile);
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    expect(seen).toEqual(["Bearer kept", "Bearer kept", "Bearer kept"]);
  });

  it("sends a GET once more when its connection was closed under it, only once, never a write", async () => {
    let gets = 0;
    let posts = 0;
    const kube = await serve((req, res) => {
      if (req.method === "POST") posts++;
      if (req.method === "POST" || ++gets === 1 || req.url?.includes("/gone")) {
        return req.socket.destroy();
      }
      json(res, 200, cm("a"));
    });
    await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" });
    expect(gets).toBe(2);
    await expect(kube.create(CONFIGMAPS, cm("b"))).rejects.toThrow();
    expect(posts).toBe(1);
    // A front that closes every connection: the GET fails after its second try.
    const closed = await kube.get(CONFIGMAPS, { namespace: "ns", name: "gone" }).catch((e) => e);
    expect(isConnectionReset(closed)).toBe(true);
    expect(gets).toBe(4);
  });

  it("fails with a KubeUnreachableError when the connection is closed under a request, nothing listens, or a front answers 502 for the API server; an answer's status is a KubeApiError", async () => {
    const statuses = [403, 422, 500, 503];
    const kube = await serve((req, res) => {
      const status = statuses.find((s) => req.url?.includes(`/status-${s}`));
      if (req.url?.includes("/front-502")) {
        res.writeHead(502, { "content-type": "text/html" });
        return res.end("<html><head><title>502 Bad Gateway</title></head></html>");
      }
      if (!status) return req.socket.destroy();
      json(res, status, { kind: "Status", code: status, message: "refused" }, { "audit-id": "1" });
    });
    const closed = await kube.create(CONFIGMAPS, cm("a")).catch((e: unknown) => e);
    expect(closed).toBeInstanceOf(KubeUnreachableError);
    expect(closed).toMatchObject({ code: "UND_ERR_SOCKET" });
    for (const s of statuses) {
      const answered = await kube
        .get(CONFIGMAPS, { namespace: "ns", name: `status-${s}` })
        .catch((e: unknown) => e);
      expect(answered).toBeInstanceOf(KubeApiError);
      expect(isKubeUnreachable(answered)).toBe(false);
    }
    const front = await kube
      .get(CONFIGMAPS, { namespace: "ns", name: "front-502" })
      .catch((e) => e);
    expect(front).toBeInstanceOf(KubeUnreachableError);
    expect(front).toMatchObject({
      code: 502,
      message:
        'GET /api/v1/namespaces/ns/configmaps/front-502: 502 Bad Gateway from a proxy in front of the API server, not from the API server: "502 Bad Gateway"',
    });
    // The server gone: nothing listens on its port (a GET on its closed connection is
    // sent once more, on a new one).
    for (const close of closers.splice(0).reverse()) await close();
    const refused = await kube.get(CONFIGMAPS, { namespace: "ns", name: "a" }).catch((e) => e);
    expect(refused).toBeInstanceOf(KubeUnreachableError);
    expect(refused).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("lists in pages of 500 and starts again in one piece when a continue expired", async () => {
    const queries: string[] = [];
    let expire = true;
    const kube = await serve((req, res) => {
      const q = new URL(req.url ?? "", "http://x").searchParams;
      queries.push(q.toString());
      const page = (items: string[], cont?: string) =>
        json(res, 200, {
          items: items.map(cm),
          metadata: { resourceVersion: "77", ...(cont ? { continue: cont } : {}) },
        });
      if (!q.get("limit")) return page(["a", "b", "c"]);
      if (!q.get("continue")) return page(["a"], "tok1");
      if (expire) {
        expire = false;
        return json(res, 410, { reason: "Expired", code: 410 });
      }
      return page(["b"]);
    });
    const list = await kube.list(CONFIGMAPS, "ns");
    expect(list.items.map((o) => o.metadata?.name)).toEqual(["a", "b", "c"]);
    expect(queries).toEqual(["limit=500", "limit=500&continue=tok1", ""]);
    const again = await kube.list(CONFIGMAPS, "ns", { labelSelector: "x=y" });
    expect(again.items.map((o) => o.metadata?.name)).toEqual(["a", "b"]);
    expect(again.resourceVersion).toBe("77");
  });

  it("maps each listed item of every page through the transform (an informer drops managedFields)", async () => {
    const kube = await serve((req, res) => {
      const cont = new URL(req.url ?? "", "http://x").searchParams.get("continue");
      const item = {
        ...cm(cont ? "b" : "a"),
        metadata: { name: cont ? "b" : "a", managedFields: [{}] },
      };
      json(res, 200, {
        items: [item],
        metadata: { resourceVersion: "9", ...(cont ? {} : { continue: "t" }) },
      });
    });
    const seen: unknown[] = [];
    const list = await kube.list(CONFIGMAPS, "ns", {
      transform: (o) => {
        seen.push(o.metadata?.managedFields);
        return leanObject(o);
      },
    });
    expect(seen).toEqual([[{}], [{}]]);
    expect(
      list.items.map((o) => [o.metadata?.name, "managedFields" in (o.metadata ?? {})]),
    ).toEqual([
      ["a", false],
      ["b", false],
    ]);
  });
});

describe("retryWaitMs", () => {
  const cases: {
    reason: string;
    method: string;
    status: number;
    retryAfter?: string;
    want?: number;
  }[] = [
    { reason: "429 with Retry-After", method: "POST", status: 429, retryAfter: "3", want: 3_000 },
    { reason: "429 without Retry-After: 1 s", method: "PATCH", status: 429, want: 1_000 },
    {
      reason: "a long Retry-After is capped",
      method: "GET",
      status: 429,
      retryAfter: "120",
      want: 10_000,
    },
    {
      reason: "GET 503 with Retry-After",
      method: "GET",
      status: 503,
      retryAfter: "2",
      want: 2_000,
    },
    { reason: "GET 500 without Retry-After: no retry", method: "GET", status: 500 },
    { reason: "a write's 503 is not retried", method: "PUT", status: 503, retryAfter: "1" },
    { reason: "a 409 is not retried", method: "GET", status: 409, retryAfter: "1" },
    {
      reason: "an HTTP date is not seconds: 1 s for a 429",
      method: "GET",
      status: 429,
      retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT",
      want: 1_000,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(retryWaitMs(c.method, { status: c.status, retryAfter: c.retryAfter })).toBe(c.want);
    });
  }
});
