import { connect } from "node:tls";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllers } from "../../src/controllers/index.js";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import { allCrds } from "../../src/crds/index.js";
import { kubeRequest } from "../support/http.js";
import { createNamespace, eventually } from "../support/kube.js";
import {
  type NetworkTestBed,
  READY_MS,
  readyThrough,
  startNetworkOperator,
  startNetworkTestBed,
  UserNasVolumes,
} from "../support/network-operator.js";

/** The protocol the API server picks in ALPN when a client offers h2 and http/1.1. */
function negotiated(port: number): Promise<string | false> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: "127.0.0.1", port, ALPNProtocols: ["h2", "http/1.1"], rejectUnauthorized: false },
      () => {
        resolve(socket.alpnProtocol ?? false);
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

/**
 * The operator against kube-apiservers configured as some clusters are: one that serves
 * HTTP/1.1 only, and one that allows 100 streams per HTTP/2 connection while the
 * operator watches 40 namespaces (7 watches each). One control plane of their own,
 * its API server restarted with the second set of flags.
 */
describe("the operator against API servers with other serving flags", () => {
  let plane: LocalControlPlane;
  let kc: k8s.KubeConfig;
  let bed: NetworkTestBed;

  beforeAll(async () => {
    plane = await new LocalControlPlane({ apiServerFlags: ["--disable-http2-serving"] }).start();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
    bed = await startNetworkTestBed(kc);
  });

  afterAll(async () => {
    await bed?.stop();
    await plane?.stop();
  });

  it("works with a kube-apiserver started with --disable-http2-serving", async () => {
    expect(await negotiated(plane.apiServerPort)).toBe("http/1.1");
    await readyThrough(bed, kc, plane.kubeconfigPath, "net-http1");
  });

  it("watches 40 namespaces on a server of 100 streams per connection: Ready in the last, the Lease renewed for 90 s", async () => {
    await plane.stopApiServer();
    await plane.startApiServer(["--http2-max-streams-per-connection=100"]);
    expect(await negotiated(plane.apiServerPort)).toBe("h2");
    // A restarted API server answers 429 for a custom resource until its storage is
    // ready: the operator starts once every kind lists.
    for (const crd of allCrds) {
      const path = `/apis/${crd.group}/${crd.version}/${crd.plural}?limit=1`;
      await eventually(async () => (await kubeRequest(kc, "GET", path)).status === 200, 60_000);
    }
    const namespaces = await Promise.all(
      Array.from({ length: 40 }, (_, i) => createNamespace(kc, `net-streams-${i}`)),
    );
    const last = namespaces[39] ?? "";
    const leaseNamespace = namespaces[0] ?? "";
    const op = await startNetworkOperator({
      emulatorUrl: bed.emulator.url,
      namespaces,
      kubeconfig: plane.kubeconfigPath,
      // Every controller: 7 watches per namespace, 280 in all.
      controllers,
      config: {
        leaderElection: { enabled: true, leaseName: "net-streams", leaseNamespace },
      },
    });
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    const readLease = async () => {
      const lease = await leases.readNamespacedLease({
        name: "net-streams",
        namespace: leaseNamespace,
      });
      return {
        holder: lease.spec?.holderIdentity ?? "",
        renewed: new Date(lease.spec?.renewTime ?? 0).getTime(),
      };
    };
    let code: number | string = "not stopped";
    try {
      const first = await eventually(async () => {
        const lease = await readLease();
        return lease.holder ? lease : undefined;
      }, READY_MS).catch((err: Error) => {
        throw new Error(`no leader: ${err.message}; the operator's last lines:\n${op.logTail()}`);
      });
      const nas = new UserNasVolumes(kc, last);
      await nas.create("last");
      await nas.waitReady("last", READY_MS, op);
      // For 90 s the Lease stays held and valid: renewed (every 2 s, retryPeriodMs) well
      // within its 15 s duration at every sample, and renewed on past the first sample.
      const ages: number[] = [];
      let latest = first;
      const end = Date.now() + 90_000;
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, 5_000));
        latest = await readLease();
        expect(latest.holder).toBe(first.holder);
        ages.push(Date.now() - latest.renewed);
      }
      expect(
        ages.filter((age) => age > 15_000),
        `the Lease's age at each sample (ms): ${ages.join(", ")}`,
      ).toEqual([]);
      expect(latest.renewed - first.renewed).toBeGreaterThan(80_000);
      expect(op.manager()?.running).toBe(true);
    } finally {
      code = await op.stop();
    }
    expect(code).toBe(0);
  }, 240_000);
});
