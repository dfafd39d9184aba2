/**
 * A Bucket whose object storage is reached only through the environment's HTTP_PROXY,
 * on the real API server and a real S3 server (MinIO): a create the proxy could not
 * take (it stopped between the bucket's check and its create) was not sent, so it is
 * a plain retry whose condition names the proxy and the setting, never an unknown
 * outcome; once the proxy is back the Bucket is Ready. The proxy's password, with an
 * `@` and a `%` percent-encoded in the URL, reaches the proxy decoded and is shown nowhere.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { runInProcessWith } from "../support/run-operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

/** A name no DNS knows: only the proxy reaches it (it maps it to MinIO on loopback). */
const S3_HOST = "s3.aidc.test";
const PASSWORD = "p@ss%w0rd";
const PROXY_USER = `aidc:${encodeURIComponent(PASSWORD)}`;

/**
 * A loopback proxy of absolute-form requests (an http:// URL through HTTP_PROXY) to
 * {@link S3_HOST}. `stop-after-head`: it stops listening once it has answered a HEAD
 * (the Bucket's check before its create), so the create that follows finds no proxy.
 * `lose-first-create`: it passes the first CreateBucket on and resets the connection in
 * place of its answer, as a proxy restarting would (the SDK sends it again).
 */
class TestProxy {
  private server = createServer((req, res) => this.forward(req, res));
  port = 0;
  mode: "stop-after-head" | "lose-first-create" | "pass" = "pass";
  /** The Proxy-Authorization headers it was sent. */
  readonly auth = new Set<string>();

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Listens again on the same port (unless it still listens), passing everything. */
  async restart(): Promise<void> {
    this.mode = "pass";
    if (this.server.listening) return;
    this.server = createServer((req, res) => this.forward(req, res));
    await this.start();
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "");
    const { "proxy-authorization": auth, ...headers } = req.headers;
    this.auth.add(String(auth));
    const stopping = this.mode === "stop-after-head" && req.method === "HEAD";
    const losing = this.mode === "lose-first-create" && req.method === "PUT" && !url.search;
    if (losing) this.mode = "pass";
    const upstream = request(
      {
        host: "127.0.0.1",
        port: url.port,
        method: req.method,
        path: url.pathname + url.search,
        headers,
      },
      (up) => {
        if (losing) {
          up.resume();
          up.on("end", () => req.socket.resetAndDestroy());
          return;
        }
        // Not kept alive: the next call needs a new connection, which finds none.
        res.writeHead(up.statusCode ?? 502, { ...up.headers, connection: "close" });
        up.pipe(res);
        if (stopping) res.on("finish", () => void this.stop());
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  }
}

describe("a Bucket whose object storage is reached through HTTP_PROXY", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let s3: TestS3;
  let proxy: TestProxy;
  let namespace = "";

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "bucket-proxy");
    emulator = await startEmulator({ apiKey: TEST_API_KEY });
    s3 = await startTestS3();
    proxy = new TestProxy();
    await proxy.start();
  });
  afterAll(async () => {
    await proxy?.stop();
    await s3?.stop();
    await emulator?.stop();
  });

  const buckets = () => new ObjectsOf(new KubeClient(kc), bucketCrd, namespace);
  const run = () =>
    runInProcessWith(
      {
        service: { baseUrl: emulator.url, allowInsecureHttp: true },
        objectStorage: {
          ...s3.config,
          endpoint: `http://${S3_HOST}:${new URL(s3.server.url).port}`,
        },
        watchNamespaces: [namespace],
        backoff: { baseMs: 200, maxMs: 1_000 },
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "silent" },
      },
      {
        controllerFactories: [bucketController],
        env: {
          AIDC_API_KEY: TEST_API_KEY,
          HTTP_PROXY: `http://${PROXY_USER}@127.0.0.1:${proxy.port}`,
        },
      },
    );

  it("retries a create the stopped proxy refused as not sent, naming the proxy and HTTP_PROXY, and is Ready once it is back", async () => {
    proxy.mode = "stop-after-head";
    const op = await run();
    const name = `down-${namespace}`;
    const reasons = new Set<string>();
    const seen = (obj: KubeObject) => {
      for (const type of ["Ready", "Synced"]) {
        const reason = conditionOf(obj, type)?.reason;
        if (reason) reasons.add(reason);
      }
    };
    try {
      await buckets().create(name, { versioning: "Enabled" });
      // The create's failure is in its Warning Event. Synced may show the retry's check
      // instead: the failure's status write can conflict with the marker's removal.
      const note = await eventually(async () => {
        const { items } = await new KubeClient(kc).list<KubeObject>(EVENTS, namespace);
        return items
          .filter((e) => (e.regarding as { name?: string } | undefined)?.name === name)
          .map((e) => String(e.note))
          .find((n) => n.includes("S3 CreateBucket"));
      }, 60_000);
      expect(note).toContain(
        `S3 CreateBucket of bucket ${name}: no answer (the proxy http://127.0.0.1:${proxy.port} of HTTP_PROXY cannot be reached: connect ECONNREFUSED 127.0.0.1:${proxy.port})`,
      );
      // Known not sent: no create is pending, nothing is looked up.
      const failed = await buckets().waitFor(name, (o) => {
        seen(o);
        return true;
      });
      expect(failed.metadata?.annotations?.["aidc.io/create-pending"]).toBeUndefined();
      await proxy.restart();
      const ready = await buckets().waitFor(
        name,
        (o) => {
          seen(o);
          return conditionOf(o, "Ready")?.status === "True";
        },
        60_000,
      );
      expect(reasons).not.toContain("CreateOutcomeUnknown");
      expect(await s3.client().getVersioning(name)).toBe("Enabled");
      // The password went to the proxy decoded, and is in no status or Event.
      expect(proxy.auth).toEqual(
        new Set([`Basic ${Buffer.from(`aidc:${PASSWORD}`).toString("base64")}`]),
      );
      const events = await eventually(async () => {
        const { items } = await new KubeClient(kc).list(EVENTS, namespace);
        return items.length > 0 ? items : undefined;
      });
      const shown = JSON.stringify([ready, events]);
      expect(shown).not.toContain(PASSWORD);
      expect(shown).not.toContain(encodeURIComponent(PASSWORD));
    } finally {
      expect(await op.stop()).toBe(0);
    }
  });

  it("takes as its own the bucket of a create whose answer the proxy lost and the SDK sent again (BucketAlreadyOwnedByYou): Ready, not BucketExistsNotAdopted", async () => {
    // Independent of the case before: the proxy listens, whatever that case left.
    await proxy.restart();
    proxy.mode = "lose-first-create";
    const op = await run();
    const name = `lost-${namespace}`;
    try {
      await buckets().create(name, { versioning: "Enabled" });
      const ready = await buckets().waitFor(
        name,
        (o) =>
          conditionOf(o, "Ready")?.status === "True" ||
          conditionOf(o, "Stalled")?.status === "True",
        60_000,
      );
      expect(conditionOf(ready, "Ready")).toMatchObject({ status: "True", reason: "Available" });
      expect(proxy.mode).toBe("pass");
      expect(await s3.client().getVersioning(name)).toBe("Enabled");
    } finally {
      expect(await op.stop()).toBe(0);
    }
  });
});
