import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { DEFAULT_KUBE_MAX_IN_FLIGHT } from "../../src/runtime/defaults.js";
import { ApiFront } from "../support/api-front.js";
import {
  createNamespace,
  networkSuite,
  startNetworkOperator,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/kube-networks.js";

const N = 1_000;
/** How long the front holds each request. */
const DELAY_MS = 100;

/** How many NasVolumes of `namespace` are Ready (True). */
async function readyCount(api: k8s.CustomObjectsApi, namespace: string): Promise<number> {
  const list = (await api.listNamespacedCustomObject({
    group: nasVolumeCrd.group,
    version: nasVolumeCrd.version,
    plural: nasVolumeCrd.plural,
    namespace,
  })) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
  return list.items.filter((o) =>
    o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  ).length;
}

/**
 * The operator behind a slow API server: a front that holds every request 100 ms
 * before forwarding it (watches too), with 1,000 NasVolumes made before the operator
 * starts, so that its first lists read them all through the front.
 */
describe("the operator behind a slow API server", () => {
  const net = networkSuite();

  it(`makes ${N} NasVolumes Ready, one NAS each, through a front that holds each request ${DELAY_MS} ms: progress every 30 s, its requests in flight bounded`, async () => {
    const namespace = await createNamespace(net.admin, "net-slow");
    const nas = new UserNasVolumes(net.admin, namespace);
    const names = Array.from({ length: N }, (_, i) => `slow${i}`);
    for (let i = 0; i < N; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => nas.create(name)));
    }
    const front = await new ApiFront({
      upstream: net.admin,
      protocols: "h2,http/1.1",
      delayMs: DELAY_MS,
    }).start();
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "slow"),
      { slow: { server: front.url, ca: front.caCert } },
      "slow",
    );
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
      // Ready objects are read again every 30 s, not every 500 ms.
      config: { pollIntervalMs: { default: 30_000 } },
    });
    const api = net.admin.makeApiClient(k8s.CustomObjectsApi);
    /** The NAS of each name in the emulator. */
    const remoteCounts = () => {
      const counts = new Map<string, number>();
      for (const n of net.bed.emulator.state.nas.values()) {
        if (n.name.startsWith("slow")) counts.set(n.name, (counts.get(n.name) ?? 0) + 1);
      }
      return counts;
    };
    const started = Date.now();
    const progress: string[] = [];
    try {
      // Progress: a NAS made in the emulator, or a NasVolume Ready. Every object is
      // created before the first is Ready (the workqueue takes them in turn).
      let ready = 0;
      let made = 0;
      let lastGain = Date.now();
      while (ready < N) {
        await new Promise((r) => setTimeout(r, 2_000));
        const now = { ready: await readyCount(api, namespace), made: remoteCounts().size };
        if (now.ready > ready || now.made > made) lastGain = Date.now();
        ({ ready, made } = now);
        progress.push(`${Math.round((Date.now() - started) / 1000)}s:${made}/${ready}`);
        expect(
          Date.now() - lastGain,
          `no progress for 30 s: ${progress.join(" ")}\n${op.logTail()}`,
        ).toBeLessThan(30_000);
      }
    } finally {
      await op.stop();
      await front.stop();
    }
    const remote = remoteCounts();
    expect(names.filter((name) => remote.get(name) !== 1)).toEqual([]);
    // Bounded: each client (the reconciles', the Events') has at most its seats at the server.
    expect(front.maxInFlight).toBeLessThanOrEqual(2 * DEFAULT_KUBE_MAX_IN_FLIGHT);
  }, 600_000);
});
