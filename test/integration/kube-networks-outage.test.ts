import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { controllers } from "../../src/controllers/index.js";
import { CONFIG_MAPS } from "../../src/controllers/managed/export.js";
import { ObjectStore } from "../../src/runtime/cache.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { Informer } from "../../src/runtime/informer.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { KubeUnreachableError } from "../../src/runtime/kube-unreachable.js";
import { kubeListerWatcher } from "../../src/runtime/listwatch.js";
import { RuntimeMetrics } from "../../src/runtime/metrics.js";
import { ApiFront } from "../support/api-front.js";
import { ConnectProxy } from "../support/connect-proxy.js";
import { adminKubeConfig, viaPort } from "../support/kube.js";
import {
  createNamespace,
  eventually,
  networkSuite,
  READY_MS,
  startNetworkOperator,
  TcpProxy,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/kube-networks.js";

/** A log line as the operator writes it (JSON). */
interface Line {
  level: string;
  time: string;
  msg: string;
  downMs?: number;
  notWatching?: string;
  key?: string;
  reconcileId?: string;
  retryInMs?: number;
  err?: { type?: string; message?: string };
}

/** The lines of the operator's log `log` (its whole tail) written at `at` or later. */
function linesSince(log: string, at: number): Line[] {
  return log
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => Date.parse(l.time) >= at);
}

/**
 * Checks the warnings and errors of an outage of 20 s (`lines`, from its start): a
 * reconcile that runs during it (the NasVolume's poll that finds its storage filled, a
 * catalog's status write the cut stopped) fails as any reconcile does, one line per
 * failure with the object, the error (`error`) and the next retry, at least one for
 * `key`. Its error policy's condition write and its Event get no answer either and add
 * no line: the cache speaks for the outage. Answers the cache's warnings, each
 * `the cache's watches failed; retrying`, 4 to 6 of them.
 */
function expectOutageLines(lines: Line[], key: string, error: RegExp): Line[] {
  const logged = lines.filter((l) => l.level === "warn" || l.level === "error");
  const failed = logged.filter((l) => l.msg === "reconcile failed; will retry");
  expect(failed.filter((l) => l.key === key).length).toBeGreaterThan(0);
  for (const f of failed) {
    expect(f.err?.type, JSON.stringify(f)).toBe("KubeUnreachableError");
    expect(f.err?.message).toMatch(error);
    expect(f.retryInMs, JSON.stringify(f)).toBeGreaterThan(0);
  }
  expect(new Set(failed.map((f) => f.reconcileId)).size).toBe(failed.length);
  // Retried on the operator's backoff (100 ms doubling to 2 s here) while the API server
  // is out of reach (20 s): about 15 tries of a key.
  for (const k of new Set(failed.map((f) => f.key))) {
    expect(failed.filter((f) => f.key === k).length, k).toBeLessThanOrEqual(20);
  }
  const warnings = logged.filter((l) => !failed.includes(l));
  // The informers' backoff steps end at 0.5, 1.5, 3.5, 7.5, 15.5 and 31.5 s: one
  // warning for all kinds at 1, 3, 7, 15 and 31 s, none of each kind's.
  expect(warnings.length, JSON.stringify(warnings)).toBeGreaterThanOrEqual(4);
  expect(warnings.length, JSON.stringify(warnings)).toBeLessThanOrEqual(6);
  for (const w of warnings)
    expect(w.msg, JSON.stringify(w)).toBe("the cache's watches failed; retrying");
  return warnings;
}

/**
 * The operator, its caches synced, while the proxy between it and the API server (the
 * kubeconfig's proxy-url) is down for 20 s and comes back, as a proxy restarting; or
 * while a front's API server is down, the front answering 502 for it: what its log
 * says, and that it carries on.
 */
describe("the operator while the proxy to its API server is down", () => {
  const net = networkSuite();
  const { admin, access } = net;

  /**
   * The operator through `kubeconfig` on `namespace`, every controller (11 kinds
   * watched): a NasVolume Ready, then `cut` stopped for 20 s (its storage filling
   * meanwhile, so that the next poll writes its status and fails) and started again on
   * its port, its watches back, another NasVolume Ready. Its log's lines from the cut on.
   */
  async function outage(kubeconfig: string, namespace: string, cut: TcpProxy, port: number) {
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
      controllers,
    });
    const nas = new UserNasVolumes(admin, namespace);
    const since = (at: number) => linesSince(op.logTail(Number.MAX_SAFE_INTEGER), at);
    try {
      await nas.create("before");
      await nas.waitReady("before", READY_MS, op);
      const cutAt = Date.now();
      await cut.stop();
      for (const n of net.bed.emulator.state.nas.values()) if (n.name === "before") n.usedGB = 10;
      await new Promise((r) => setTimeout(r, 20_000));
      await cut.start(port);
      await eventually(async () => since(cutAt).some(back), 60_000).catch((err: Error) => {
        throw new Error(`${err.message}; the operator's last lines:\n${op.logTail(30)}`);
      });
      await nas.create("after");
      await nas.waitReady("after", READY_MS, op);
      return since(cutAt);
    } finally {
      await op.stop();
    }
  }
  const back = (l: Line) => l.msg === "the cache's watches are back";

  it("says once per backoff step, for every kind at once, that the proxy of its proxy-url cannot be reached, once per failed reconcile, and once that the watches are back", async () => {
    const password = "pr0xy-pa55";
    const connect = new ConnectProxy({}, `aidc:${password}`);
    await connect.start();
    // The proxy as the operator reaches it: stopped and started again on its port.
    const proxy = new TcpProxy(Number(new URL(connect.url).port));
    const port = await proxy.start();
    try {
      const namespace = await createNamespace(admin, "net-outage");
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "outage"),
        { outage: { ...access, proxyUrl: `http://aidc:${password}@127.0.0.1:${port}` } },
        "outage",
      );
      const lines = await outage(kubeconfig, namespace, proxy, port);
      const warnings = expectOutageLines(
        lines,
        `${namespace}/before`,
        /other side closed|ECONNRE|cannot be reached|socket hang up/,
      );
      expect(warnings[0]?.notWatching).toMatch(
        new RegExp(
          `^not watching: (\\S+, ){10}\\S+ \\(the proxy http://127\\.0\\.0\\.1:${port} of the kubeconfig's proxy-url cannot be reached: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)$`,
        ),
      );
      expect(warnings[0]?.notWatching).toContain("nasvolumes.aidc.io");
      const backs = lines.filter(back);
      expect(backs).toHaveLength(1);
      expect(backs[0]?.downMs).toBeGreaterThanOrEqual(20_000);
      expect(JSON.stringify(lines)).not.toContain(password);
    } finally {
      await proxy.stop();
      await connect.stop();
    }
  }, 180_000);

  it("says the same behind a front that answers 502 while its API server cannot be reached: once per failed reconcile, no error policy's or Event's warning", async () => {
    // The API server as the front reaches it: stopped and started again on its port.
    const server = new URL(access.server);
    const cut = new TcpProxy(Number(server.port));
    const port = await cut.start();
    // Over HTTP/2, where the front's page comes after its head: a watch answered so is
    // not taken for one answered (no "the cache's watches are back" until they are).
    const front = await new ApiFront({
      upstream: viaPort(admin, port),
      protocols: "h2,http/1.1",
    }).start();
    try {
      const namespace = await createNamespace(admin, "net-outage-front");
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "outage-front"),
        { front: { server: front.url, ca: front.caCert } },
        "front",
      );
      const lines = await outage(kubeconfig, namespace, cut, port);
      // The front's 502 page, or a request it had sent when the cut came, cut in turn.
      const warnings = expectOutageLines(
        lines,
        `${namespace}/before`,
        /502 Bad Gateway from a proxy in front of the API server|other side closed|ECONNRE|socket hang up/,
      );
      expect(warnings[0]?.notWatching).toMatch(
        /^not watching: (\S+, ){10}\S+ \(502 Bad Gateway from a proxy in front of the API server, not from the API server: "502 Bad Gateway"\)$/,
      );
      expect(lines.filter(back)).toHaveLength(1);
    } finally {
      await front.stop();
      await cut.stop();
    }
  }, 180_000);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The runtime's own parts while the API server cannot be reached for some seconds: a
 * watch behind a front that answers 502 for it, an Event recorded meanwhile.
 */
describe("the runtime while the API server cannot be reached", () => {
  const admin = adminKubeConfig();
  const apiPort = Number(new URL(admin.getCurrentCluster()?.server ?? "").port);

  it("says a watch that a front answers 502 for its API server ended unanswered, as a request", async () => {
    // The API server as the front reaches it, cut while the informer watches.
    const cut = new TcpProxy(apiPort);
    const port = await cut.start();
    const front = await new ApiFront({
      upstream: viaPort(admin, port),
      protocols: "http/1.1",
    }).start();
    const lines: { msg: string; err?: { type?: string; message?: string } }[] = [];
    const log = pino({ level: "debug" }, { write: (l: string) => lines.push(JSON.parse(l)) });
    const kube = new KubeClient(front.kubeConfig());
    const namespace = await createNamespace(admin, "watch-front");
    const informer = new Informer(
      CONFIG_MAPS,
      new ObjectStore(),
      (ns) => kubeListerWatcher(kube, CONFIG_MAPS, ns),
      { namespaces: [namespace], initialBackoffMs: 200, maxBackoffMs: 1_000, log },
    );
    try {
      informer.start();
      await informer.waitForSync();
      await cut.stop();
      const byFront = () => lines.filter((l) => /502 Bad Gateway/.test(l.err?.message ?? ""));
      await eventually(async () => byFront().length >= 2, 15_000);
      for (const l of byFront())
        expect(l.err?.type, JSON.stringify(l)).toBe("KubeUnreachableError");
      expect(informer.lastError()).toBeInstanceOf(KubeUnreachableError);
    } finally {
      await informer.stop();
      await front.stop();
      await cut.stop();
    }
  }, 60_000);

  const events = admin.makeApiClient(k8s.EventsV1Api);

  /** An EventRecorder through a TcpProxy to the API server, its dropped Events counted. */
  async function recorderViaProxy(retry: { tries: number; delayMs: number }) {
    const proxy = new TcpProxy(apiPort);
    const port = await proxy.start();
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const kube = new KubeClient(viaPort(admin, port), { rateLimit: { qps: 100, burst: 100 } });
    const recorder = new EventRecorder(kube, {
      controller: "aidc.io/outage-test",
      instance: "outage-test",
      seriesUpdateMs: 0,
      retry,
      dropped: metrics.eventsDropped,
    });
    const dropped = async () =>
      Number(
        /aidc_events_dropped_total\{reason="unanswered"\} (\d+)/.exec(await metrics.text())?.[1] ??
          0,
      );
    return { proxy, port, recorder, dropped };
  }

  /** A ConfigMap of a fresh namespace, to record Events about, and the Events about it. */
  async function subject(prefix: string) {
    const namespace = await createNamespace(admin, prefix);
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const cm = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "subject" } },
    });
    const { name, uid, resourceVersion } = cm.metadata ?? {};
    const obj = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace, uid, resourceVersion },
    };
    const about = async () =>
      (await events.listNamespacedEvent({ namespace })).items.filter(
        (e) => e.regarding?.name === "subject",
      );
    return { obj, about };
  }

  it("writes an Event recorded while the API server cannot be reached once it can, once, its repeats as its series' count", async () => {
    const { proxy, port, recorder, dropped } = await recorderViaProxy({
      tries: 12,
      delayMs: 1_000,
    });
    try {
      const { obj, about } = await subject("ev-outage");
      await proxy.stop();
      recorder.warning(obj, "CreateFailed", "the service did not answer");
      await sleep(2_000);
      recorder.warning(obj, "CreateFailed", "the service did not answer");
      recorder.warning(obj, "CreateFailed", "the service did not answer");
      await sleep(3_000);
      await proxy.start(port);
      await eventually(async () => (await about())[0]?.series?.count === 3, 15_000);
      const written = await about();
      expect(written).toHaveLength(1);
      expect(written[0]).toMatchObject({ reason: "CreateFailed", type: "Warning" });
      await recorder.flush();
      expect(await dropped()).toBe(0);
    } finally {
      await recorder.flush();
      await proxy.stop();
    }
  }, 60_000);

  it("drops an Event whose tries all went unanswered, and counts it", async () => {
    const { proxy, port, recorder, dropped } = await recorderViaProxy({ tries: 3, delayMs: 500 });
    try {
      const { obj, about } = await subject("ev-dropped");
      await proxy.stop();
      recorder.warning(obj, "CreateFailed", "the service did not answer");
      // Three tries about 0.5 s apart, within the 5 s the API server is out of reach.
      await eventually(async () => (await dropped()) === 1, 5_000);
      await sleep(5_000 - 2_000);
      await proxy.start(port);
      recorder.normal(obj, "Created", "after the outage");
      await recorder.flush();
      expect((await about()).map((e) => e.reason)).toEqual(["Created"]);
      expect(await dropped()).toBe(1);
    } finally {
      await proxy.stop();
    }
  }, 60_000);
});
