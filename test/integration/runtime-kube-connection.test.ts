import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ObjectStore } from "../../src/runtime/cache.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { Informer } from "../../src/runtime/informer.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { loadKubeConfig } from "../../src/runtime/kube-config.js";
import { LeaderElector } from "../../src/runtime/leader-election.js";
import { kubeListerWatcher } from "../../src/runtime/listwatch.js";
import type { ResourceDescriptor } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually, viaPort } from "../support/kube.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

const NAMESPACES: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};
const CONFIGMAPS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};
const N = 40;
const FAST = { qps: 1_000, burst: 1_000 };

const apiServerPort = () =>
  Number(new URL(adminKubeConfig().getCurrentCluster()?.server ?? "").port);

describe("one connection to the API server", () => {
  const admin = adminKubeConfig();
  let namespace: string;
  let tcp: TcpProxy;
  let port: number;
  const stops: (() => unknown)[] = [];

  beforeAll(async () => {
    await installGizmoCrd(admin);
    namespace = await createNamespace(admin, "conn");
  });

  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await tcp?.stop();
  });

  async function proxy(): Promise<number> {
    tcp = new TcpProxy(apiServerPort());
    port = await tcp.start();
    return port;
  }

  it("carries every kind of request of a client on one connection: raw, watches, Events, the Lease", async () => {
    const kube = new KubeClient(viaPort(admin, await proxy()), { rateLimit: FAST });
    // Raw requests, one after another and all at once.
    for (let i = 0; i < N; i++) await kube.get(NAMESPACES, { namespace: "", name: namespace });
    await Promise.all(
      Array.from({ length: N }, () => kube.get(NAMESPACES, { namespace: "", name: namespace })),
    );
    // Watches, several at once, while requests go on.
    const informers = [GIZMOS, NAMESPACES].map((res) => {
      const inf = new Informer(res, new ObjectStore(), (ns) => kubeListerWatcher(kube, res, ns), {
        namespaces: res.namespaced ? [namespace] : [],
      });
      inf.start();
      stops.push(() => inf.stop());
      return inf;
    });
    await eventually(async () => informers.every((i) => i.hasSynced()));
    await kube.create(GIZMOS, gizmo(namespace, "seen"));
    await eventually(async () => informers[0]?.store.list().length === 1);
    // Events and leader election through clients of their own on the same KubeConfig.
    const events = new EventRecorder(new KubeClient(kube.config, { rateLimit: FAST }), {
      controller: "test/conn",
      instance: "conn-test",
      spamBurst: N, // every one of the N Events is written
    });
    const target = await kube.get(NAMESPACES, { namespace: "", name: namespace });
    for (let i = 0; i < N; i++) events.normal(target ?? {}, `Reason${i}`, `note ${i}`);
    await events.flush();
    let leading = false;
    const elector = new LeaderElector(new KubeClient(kube.config, { rateLimit: FAST }), {
      leaseName: "conn-test",
      leaseNamespace: namespace,
      identity: "conn-test",
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 200,
      onStartedLeading: () => {
        leading = true;
      },
      onStoppedLeading: () => undefined,
    });
    elector.start();
    stops.push(() => elector.stop());
    await eventually(async () => leading);
    await new Promise((r) => setTimeout(r, 1_000)); // a few renewals
    // HTTP/2 carries all of it as streams of one connection (kube-transport.ts): the
    // server's stream limit is far from reached.
    expect(tcp.accepted).toBe(1);
    expect(tcp.open).toBe(1);
  });

  it("gives an in-cluster config (service account token, CA file) one connection too", async () => {
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: "conn-reader" } },
    });
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "conn-reader" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "conn-reader" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "conn-reader" },
        subjects: [{ kind: "ServiceAccount", name: "conn-reader", namespace }],
      },
    });
    const token = await core.createNamespacedServiceAccountToken({
      namespace,
      name: "conn-reader",
      body: { spec: { audiences: ["https://kubernetes.default.svc"], expirationSeconds: 3600 } },
    });
    // The files a pod has, under a prefix that loadFromCluster accepts.
    const prefix = await mkdtemp(join(tmpdir(), "incluster-"));
    stops.push(() => rm(prefix, { recursive: true, force: true }));
    const dir = join(prefix, "var/run/secrets/kubernetes.io/serviceaccount");
    await mkdir(dir, { recursive: true });
    const ca = admin.getCurrentCluster()?.caData ?? "";
    await writeFile(join(dir, "ca.crt"), Buffer.from(ca, "base64"));
    await writeFile(join(dir, "token"), token.status?.token ?? "");
    await writeFile(join(dir, "namespace"), namespace);

    await proxy();
    const saved = {
      host: process.env.KUBERNETES_SERVICE_HOST,
      port: process.env.KUBERNETES_SERVICE_PORT,
    };
    process.env.KUBERNETES_SERVICE_HOST = "127.0.0.1";
    process.env.KUBERNETES_SERVICE_PORT = String(port);
    const kc = new k8s.KubeConfig();
    try {
      kc.loadFromCluster(prefix);
    } finally {
      for (const [k, v] of [
        ["KUBERNETES_SERVICE_HOST", saved.host],
        ["KUBERNETES_SERVICE_PORT", saved.port],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    // The operator's own loader (no client-node) finds the same pod files.
    const lean = await loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(port) },
      serviceAccountDir: dir,
    });
    for (const config of [kc, lean]) {
      const kube = new KubeClient(config, { rateLimit: FAST });
      for (let i = 0; i < N; i++) await kube.list(CONFIGMAPS, namespace);
      await Promise.all(Array.from({ length: N }, () => kube.list(CONFIGMAPS, namespace)));
    }
    // One connection per kubeconfig object.
    expect(tcp.accepted).toBe(2);
  });

  it("drops a connection that went silent when a watch notices, and carries on over a new one", async () => {
    const kube = new KubeClient(viaPort(admin, await proxy()), { rateLimit: FAST });
    const informer = new Informer(
      GIZMOS,
      new ObjectStore(),
      (ns) => kubeListerWatcher(kube, GIZMOS, ns),
      {
        namespaces: [namespace],
        watchdogMs: 1_500,
        initialBackoffMs: 100,
        maxBackoffMs: 500,
      },
    );
    informer.start();
    stops.push(() => informer.stop());
    await eventually(async () => informer.hasSynced());
    expect(tcp.accepted).toBe(1);

    tcp.freeze(); // no FIN, no RST: only silence
    const stuck = kube.get(GIZMOS, { namespace, name: "seen" }).then(
      () => "answered",
      () => "failed",
    );
    // Written directly, not through the proxy.
    await new KubeClient(admin).create(GIZMOS, gizmo(namespace, "after-freeze"));
    await eventually(
      async () => informer.store.list().some((g) => g.metadata?.name === "after-freeze"),
      15_000,
    );
    // The request stuck on the dead connection failed (to be retried), not hung.
    expect(await stuck).toBe("failed");
    expect(tcp.accepted).toBe(2);
    await kube.get(GIZMOS, { namespace, name: "after-freeze" });
    expect(tcp.accepted).toBe(2);
  });
});
