import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { controllers } from "../../src/controllers/index.js";
import { ConnectProxy } from "../support/connect-proxy.js";
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

/**
 * The operator, its caches synced, while the proxy between it and the API server (the
 * kubeconfig's proxy-url) is down for 20 s and comes back, as a proxy restarting: what
 * its log says, and that it carries on.
 */
describe("the operator while the proxy to its API server is down", () => {
  const net = networkSuite();
  const { admin, access } = net;

  it("says once per backoff step, for every kind at once, that the proxy of its proxy-url cannot be reached, once per failed reconcile, and once that the watches are back", async () => {
    const password = "pr0xy-pa55";
    const connect = new ConnectProxy({}, `aidc:${password}`);
    await connect.start();
    // The proxy as the operator reaches it: stopped and started again on its port.
    const proxy = new TcpProxy(Number(new URL(connect.url).port));
    const port = await proxy.start();
    const namespace = await createNamespace(admin, "net-outage");
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "outage"),
      { outage: { ...access, proxyUrl: `http://aidc:${password}@127.0.0.1:${port}` } },
      "outage",
    );
    // Every controller: 11 kinds watched.
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
      controllers,
    });
    const nas = new UserNasVolumes(admin, namespace);
    const since = (at: number) =>
      op
        .logTail(Number.MAX_SAFE_INTEGER)
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Line)
        .filter((l) => Date.parse(l.time) >= at);
    try {
      await nas.create("before");
      await nas.waitReady("before", READY_MS, op);
      const cutAt = Date.now();
      await proxy.stop();
      // Its storage fills: the next poll writes the NasVolume's status (usedGB), and fails.
      for (const n of net.bed.emulator.state.nas.values()) if (n.name === "before") n.usedGB = 10;
      await new Promise((r) => setTimeout(r, 20_000));
      await proxy.start(port);
      const back = (l: Line) => l.msg === "the cache's watches are back";
      await eventually(async () => since(cutAt).some(back), 60_000);
      await nas.create("after");
      await nas.waitReady("after", READY_MS, op);

      const lines = since(cutAt);
      const logged = lines.filter((l) => l.level === "warn" || l.level === "error");
      // A reconcile that runs during the cut (the NasVolume's poll that finds its storage
      // filled, a catalog's status write the stop cut) fails as any reconcile does: one
      // line per failure, with the object, the connection's error and the next retry. Its
      // error policy's condition write and its Event get no answer either and add no line:
      // the cache speaks for the outage.
      const failed = logged.filter((l) => l.msg === "reconcile failed; will retry");
      expect(failed.filter((l) => l.key === `${namespace}/before`).length).toBeGreaterThan(0);
      for (const f of failed) {
        expect(f.err?.type, JSON.stringify(f)).toBe("KubeUnreachableError");
        expect(f.err?.message).toMatch(
          /other side closed|ECONNRE|cannot be reached|socket hang up/,
        );
        expect(f.retryInMs, JSON.stringify(f)).toBeGreaterThan(0);
      }
      expect(new Set(failed.map((f) => f.reconcileId)).size).toBe(failed.length);
      // Retried on the operator's backoff (100 ms doubling to 2 s here) while the proxy is
      // down (20 s): about 15 tries of a key.
      for (const key of new Set(failed.map((f) => f.key))) {
        expect(failed.filter((f) => f.key === key).length, key).toBeLessThanOrEqual(20);
      }
      const warnings = logged.filter((l) => !failed.includes(l));
      // The informers' backoff steps end at 0.5, 1.5, 3.5, 7.5, 15.5 and 31.5 s: one
      // warning for all kinds at 1, 3, 7, 15 and 31 s, none of each kind's.
      expect(warnings.length, JSON.stringify(warnings)).toBeGreaterThanOrEqual(4);
      expect(warnings.length, JSON.stringify(warnings)).toBeLessThanOrEqual(6);
      for (const w of warnings)
        expect(w.msg, JSON.stringify(w)).toBe("the cache's watches failed; retrying");
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
      await op.stop();
      await proxy.stop();
      await connect.stop();
    }
  }, 180_000);
});
