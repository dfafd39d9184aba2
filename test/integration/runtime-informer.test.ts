import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import { Informer } from "../../src/runtime/informer.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { kubeListerWatcher } from "../../src/runtime/listwatch.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { eventually } from "../support/kube.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

/** A KubeConfig like `kc` but pointing at another port of the loopback address. */
function viaPort(kc: k8s.KubeConfig, port: number): k8s.KubeConfig {
  const copy = new k8s.KubeConfig();
  copy.loadFromString(kc.exportConfig());
  const cluster = copy.getCurrentCluster();
  if (!cluster) throw new Error("no cluster");
  copy.clusters = [{ ...cluster, server: `https://127.0.0.1:${port}` }];
  return copy;
}

describe("an informer across an API server restart", () => {
  // Its own control plane: this test stops and starts the API server.
  const plane = new LocalControlPlane();
  const proxy = { current: undefined as TcpProxy | undefined };
  let admin: KubeClient;
  let kc: k8s.KubeConfig;
  const namespace = "informer-restart";

  beforeAll(async () => {
    await plane.start();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
    await installGizmoCrd(kc);
    admin = new KubeClient(kc);
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
  });

  afterAll(async () => {
    await proxy.current?.stop();
    await plane.stop();
  });

  it("reconnects after the restart and delivers the changes made while it was cut off", async () => {
    await admin.create(GIZMOS, gizmo(namespace, "a", { size: 1 }));
    await admin.create(GIZMOS, gizmo(namespace, "b", { size: 1 }));
    const tcp = new TcpProxy(plane.apiServerPort);
    proxy.current = tcp;
    const port = await tcp.start();
    const kube = new KubeClient(viaPort(kc, port));
    const informer = new Informer(GIZMOS, (ns) => kubeListerWatcher(kube, GIZMOS, ns), {
      namespaces: [namespace],
      initialBackoffMs: 200,
      maxBackoffMs: 1_000,
    });
    const seen: string[] = [];
    informer.on((e) => seen.push(`${e.type} ${e.object.metadata?.name}`));
    informer.start();
    try {
      await informer.waitForSync();
      await eventually(async () => informer.isWatching());
      expect(informer.store.keys().sort()).toEqual([`${namespace}/a`, `${namespace}/b`]);

      // The API server goes away: the watch ends and reconnects fail.
      await plane.stopApiServer();
      await eventually(async () => !informer.isWatching(), 30_000);

      // It comes back, but the informer is kept away while objects change.
      tcp.block();
      await plane.startApiServer();
      const a = (await admin.get(GIZMOS, { namespace, name: "a" })) as KubeObject;
      await admin.patch(GIZMOS, { namespace, name: "a" }, { spec: { size: 2 } });
      await admin.delete(GIZMOS, { namespace, name: "b" });
      await admin.create(GIZMOS, gizmo(namespace, "c", { size: 3 }));
      expect(informer.isWatching()).toBe(false);
      expect(informer.store.get(`${namespace}/a`)?.metadata?.resourceVersion).toBe(
        a.metadata?.resourceVersion,
      );

      tcp.unblock();
      await eventually(async () => {
        const sizeOfA = (informer.store.get(`${namespace}/a`)?.spec as { size?: number })?.size;
        return (
          sizeOfA === 2 &&
          informer.store.get(`${namespace}/c`) &&
          !informer.store.get(`${namespace}/b`)
        );
      }, 60_000);
      expect(seen).toEqual(expect.arrayContaining(["update a", "delete b", "add c"]));
      await eventually(async () => informer.isWatching());

      // And it keeps watching after the reconnect.
      await admin.create(GIZMOS, gizmo(namespace, "d"));
      await eventually(async () => informer.store.get(`${namespace}/d`));
    } finally {
      await informer.stop();
    }
  });
});
