import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiFront, type ApiFrontOptions } from "../support/api-front.js";
import {
  createNamespace,
  eventually,
  networkSuite,
  READY_MS,
  startNetworkOperator,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/kube-networks.js";

/**
 * The operator behind fronts that treat watches as nginx and haproxy do with their
 * shipped settings: an answer quiet for a while is cut (nginx's `proxy_read_timeout`,
 * haproxy's `timeout server`), and nginx's `proxy_buffering` holds a quiet watch's
 * answer back, headers and all, until it is cut. Rancher-style: HTTP/1.1 only, the API
 * under a path, a token of the front's own.
 */
describe("the operator behind fronts that cut or hold watches", () => {
  const net = networkSuite();
  const { admin } = net;
  const prefix = "/k8s/clusters/c-xyz";
  const token = "front-token-0123456789";

  /** A front with `options`, an operator through it on a new namespace, and its NasVolumes' paths. */
  async function behind(
    options: Partial<ApiFrontOptions>,
    name: string,
    config: Record<string, unknown> = {},
  ) {
    const front = await new ApiFront({
      upstream: admin,
      protocols: "http/1.1",
      prefix,
      token,
      ...options,
    }).start();
    const namespace = await createNamespace(admin, name);
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, name),
      { front: { server: front.url, ca: front.caCert, token } },
      "front",
    );
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
      // At debug, where each informer logs its failures (the cache's report sums them up).
      config: { log: { level: "debug" }, ...config },
    });
    const path = `${prefix}/apis/aidc.io/v1alpha1/namespaces/${namespace}/nasvolumes`;
    /** The front's requests of the namespace's NasVolumes: watches or lists. */
    const requests = (watch: boolean) =>
      front.requests.filter((r) => r.path === path && (r.query.get("watch") === "true") === watch);
    const stop = async () => {
      await op.stop();
      await front.stop();
    };
    return { op, namespace, requests, stop, nas: new UserNasVolumes(admin, namespace) };
  }

  it.each([
    ["http/1.1", "closing the connection"],
    ["h2,http/1.1", "resetting the HTTP/2 stream"],
  ] as const)(
    "resumes each watch at once, with no warning, behind a front (%s) that cuts quiet answers, %s",
    async (protocols, _how) => {
      const { op, requests, stop, nas } = await behind(
        { protocols, idleTimeoutMs: 1_500 },
        "net-cut-watches",
      );
      try {
        // Eight watches in a row, each quiet for 1.5 s and cut.
        await eventually(async () => requests(true).length >= 8, 40_000).catch((err: Error) => {
          throw new Error(`${err.message}: ${requests(true).length} watches; ${op.logTail(30)}`);
        });
        await nas.create("later");
        await nas.waitReady("later", 10_000, op);
        const starts = requests(true).map((r) => r.at);
        const gaps = starts.slice(1).map((at, i) => at - (starts[i] ?? 0));
        // 1.5 s apart: the next watch starts when the last is cut, not after a backoff.
        expect(
          gaps.filter((ms) => ms > 4_000),
          `ms between watches: ${gaps}`,
        ).toEqual([]);
        expect(op.logTail(Number.MAX_SAFE_INTEGER)).not.toContain("list/watch failed");
      } finally {
        await stop();
      }
    },
    90_000,
  );

  it.each(["http/1.1", "h2,http/1.1"] as const)(
    "sees changes behind a front (%s) that holds watches' answers, listing again after each watch it cut unanswered",
    async (protocols) => {
      const { op, requests, stop, nas } = await behind(
        { protocols, holdWatches: true, idleTimeoutMs: 2_000 },
        "net-held-watches",
      );
      try {
        await nas.create("held");
        await nas.waitReady("held", READY_MS, op);
        expect(requests(false).length).toBeGreaterThan(1);
        // The log says what happened to the watches.
        expect(op.logTail(Number.MAX_SAFE_INTEGER)).toMatch(
          /watch of \/apis\/aidc.io\/v1alpha1\/namespaces\/net-held-watches-\S+\/nasvolumes got no answer in 2 s: a proxy in front of the API server may be holding streamed answers \(nginx: proxy_buffering off\)/,
        );
      } finally {
        await stop();
      }
    },
    90_000,
  );

  it.each([["http/1.1", true]] as const)(
    "says so behind a front (%s, holding %s) that lets a held watch's events through only when it cuts it",
    async (protocols, holdWatches) => {
      // nginx 1.22 over HTTP/1.1 with proxy_buffering: a quiet watch's headers and events
      // wait until proxy_read_timeout, then pass, and the connection is closed.
      const { op, stop, nas } = await behind(
        { protocols, holdWatches, heldWatchFlushBytes: Infinity, idleTimeoutMs: 3_000 },
        "net-held-events",
      );
      try {
        await nas.create("late");
        await nas.waitReady("late", READY_MS, op);
        // At info, as an operator runs: the cache's report says it, not only the informers.
        await eventually(
          async () =>
            /"level":"warn".*watch of \/apis\/aidc.io\/v1alpha1\/namespaces\/net-held-events-\S+\/nasvolumes was held back \d+ s by a front and let through only when it was cut: changes reach the operator that late \(nginx: proxy_buffering off\)/.test(
              op.logTail(Number.MAX_SAFE_INTEGER),
            ),
          20_000,
        ).catch((err: Error) => {
          throw new Error(`${err.message}: ${op.logTail(30)}`);
        });
      } finally {
        await stop();
      }
    },
    90_000,
  );

  it("sees changes, and says so, behind a front that answers watches at once and holds their events without a timeout", async () => {
    // nginx 1.22 over HTTP/2 with proxy_buffering, its default HTTP/1.0 to the API server
    // and a long proxy_read_timeout: nothing of a watch after its headers, bookmarks
    // included, until a buffer fills.
    const { op, stop, nas } = await behind(
      { protocols: "h2,http/1.1", holdWatches: "events" },
      "net-held-quiet",
      { kube: { watchdogMs: 3_000 } },
    );
    try {
      await nas.create("quiet");
      await nas.waitReady("quiet", READY_MS, op);
      expect(op.logTail(Number.MAX_SAFE_INTEGER)).toMatch(
        /"level":"warn".*"resource":"nasvolumes.aidc.io","namespace":"net-held-quiet-[^"]+".*"msg":"the watch sent nothing for 3 s, not even a bookmark, while objects changed: a proxy in front of the API server may be holding streamed answers \(nginx: proxy_buffering off\)"/,
      );
    } finally {
      await stop();
    }
  }, 90_000);

  it.each(["http/1.1", "h2,http/1.1"] as const)(
    "sees changes behind a front (%s) that lets a held watch's first buffer through when it cuts it, listing again after a watch cut inside an event",
    async (protocols) => {
      // nginx with proxy_buffering: the cut passes the headers and what filled its first
      // buffer, here less than one event; a watch started again at the same
      // resourceVersion is cut at the same place.
      const { op, requests, stop, nas } = await behind(
        { protocols, holdWatches: true, heldWatchFlushBytes: 1_000, idleTimeoutMs: 2_000 },
        "net-cut-events",
      );
      try {
        await nas.create("cut");
        await nas.waitReady("cut", READY_MS, op);
        expect(requests(false).length).toBeGreaterThan(1);
        expect(op.logTail(Number.MAX_SAFE_INTEGER)).toMatch(
          /watch of \/apis\/aidc.io\/v1alpha1\/namespaces\/net-cut-events-\S+\/nasvolumes was cut \d+ bytes into an event: a proxy in front of the API server may be holding streamed answers \(nginx: proxy_buffering off\)/,
        );
      } finally {
        await stop();
      }
    },
    90_000,
  );
});
