import { Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { type Logger, pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import { leanObject, ObjectStore } from "../../src/runtime/cache.js";
import { Informer } from "../../src/runtime/informer.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { kubeListerWatcher } from "../../src/runtime/listwatch.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { eventually, viaPort } from "../support/kube.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

/** A pino logger whose messages land in `lines`. */
function capturingLogger(lines: string[]) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l).msg);
      done();
    },
  });
  return pino({ level: "info" }, sink);
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

  /**
   * A started informer of the namespace's gizmos that reaches the API server through a
   * proxy the test can cut; `seen` collects its events as "<type> <name>".
   */
  async function informerViaProxy(log?: Logger) {
    await proxy.current?.stop();
    const tcp = new TcpProxy(plane.apiServerPort);
    proxy.current = tcp;
    const port = await tcp.start();
    const kube = new KubeClient(viaPort(kc, port));
    const informer = new Informer(
      GIZMOS,
      new ObjectStore(),
      (ns) => kubeListerWatcher(kube, GIZMOS, ns, leanObject),
      {
        namespaces: [namespace],
        initialBackoffMs: 200,
        maxBackoffMs: 1_000,
        ...(log ? { log } : {}),
      },
    );
    const seen: string[] = [];
    informer.on((e) => seen.push(`${e.type} ${e.object.metadata?.name}`));
    informer.start();
    return { tcp, informer, seen };
  }

  it("reconnects after the restart and delivers the changes made while it was cut off", async () => {
    await admin.create(GIZMOS, gizmo(namespace, "a", { size: 1 }));
    await admin.create(GIZMOS, gizmo(namespace, "b", { size: 1 }));
    const { tcp, informer, seen } = await informerViaProxy();
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

  it("answers a 410 Gone (its resourceVersion compacted away) with a relist that delivers the deletes", async () => {
    await admin.create(GIZMOS, gizmo(namespace, "e1", { size: 1 }));
    await admin.create(GIZMOS, gizmo(namespace, "e2", { size: 1 }));
    const messages: string[] = [];
    const { tcp, informer, seen } = await informerViaProxy(capturingLogger(messages));
    try {
      await informer.waitForSync();
      await eventually(async () => informer.isWatching());
      const before = informer.store.get(`${namespace}/e1`)?.metadata?.resourceVersion;

      // Cut off, it misses changes; then etcd compacts the history it would resume
      // from, and the API server restarts, so its watch cache starts after it too.
      tcp.block();
      await eventually(async () => !informer.isWatching(), 30_000);
      for (let size = 2; size <= 5; size++) {
        await admin.patch(GIZMOS, { namespace, name: "e1" }, { spec: { size } });
      }
      await admin.delete(GIZMOS, { namespace, name: "e2" });
      const e3 = (await admin.create(GIZMOS, gizmo(namespace, "e3"))) as KubeObject;
      const revision = Number(e3.metadata?.resourceVersion);
      expect(revision).toBeGreaterThan(Number(before));
      const compacted = await fetch(`http://127.0.0.1:${plane.etcdPort}/v3/kv/compaction`, {
        method: "POST",
        body: JSON.stringify({ revision, physical: true }),
      });
      expect(compacted.status).toBe(200);
      await plane.stopApiServer();
      await plane.startApiServer();

      tcp.unblock();
      await eventually(async () => {
        const sizeOfE1 = (informer.store.get(`${namespace}/e1`)?.spec as { size?: number })?.size;
        return (
          sizeOfE1 === 5 &&
          informer.store.get(`${namespace}/e3`) &&
          !informer.store.get(`${namespace}/e2`)
        );
      }, 60_000);
      expect(messages).toContain("watch answered 410 Gone; relisting");
      // The relist delivers what the store gained and lost, the delete included.
      expect(seen).toEqual(expect.arrayContaining(["update e1", "delete e2", "add e3"]));
      await eventually(async () => informer.isWatching());
      await admin.create(GIZMOS, gizmo(namespace, "e4"));
      await eventually(async () => informer.store.get(`${namespace}/e4`));
    } finally {
      await informer.stop();
    }
  });
});
