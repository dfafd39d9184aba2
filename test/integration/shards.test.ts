/**
 * Shards (issue 32): two shards and the unsharded operator on one control plane and one
 * emulator. Each watches only its own objects (`aidc.io/shard=<key>`, or none), elects
 * its leader on its own Lease, and a relabelled object moves to the other shard without
 * a second remote resource.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARD_LABEL } from "../../src/config/shard.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { LEASES } from "../../src/runtime/leader-election.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { type OperatorInProcess, runInProcessWith } from "../support/run-operator.js";

const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };

describe("shards", () => {
  const kc = adminKubeConfig();
  const kube = new KubeClient(kc);
  let emulator: RunningEmulator;
  let namespace = "";
  const operators = new Map<string, OperatorInProcess>();

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "shards");
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 200 });
    for (const shard of ["", "a", "b"]) {
      const config = {
        service: { baseUrl: emulator.url, allowInsecureHttp: true, rateLimit: null },
        ...(shard ? { shardKey: shard } : {}),
        watchNamespaces: [namespace],
        leaderElection: { enabled: true, leaseNamespace: namespace },
        pollIntervalMs: { default: 500 },
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "silent" },
        connections: { secretNamespace: namespace },
      };
      operators.set(
        shard,
        await runInProcessWith(config, {
          controllerFactories: [nasVolumeController, serviceConnectionController],
          env: { AIDC_API_KEY: TEST_API_KEY },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const op of operators.values()) expect(await op.stop()).toBe(0);
    await emulator?.stop();
  });

  /** The NasVolume names in the cache of the operator of `shard` ("" unsharded). */
  const watchedBy = (shard: string) =>
    (operators.get(shard)?.manager.cache.list(nasVolumeCrd, namespace) ?? [])
      .map((o) => o.metadata?.name)
      .sort();

  it("reconciles every object by exactly one operator, each on its own Lease", async () => {
    const nas = new ObjectsOf(kube, nasVolumeCrd, namespace);
    const placement: Record<string, string> = {
      plain: "",
      "plain-2": "",
      "in-a": "a",
      "in-a-2": "a",
      "in-b": "b",
    };
    for (const [name, shard] of Object.entries(placement)) {
      await kube.create<KubeObject>(nasVolumeCrd, {
        apiVersion: "aidc.io/v1alpha1",
        kind: "NasVolume",
        metadata: { name, namespace, ...(shard ? { labels: { [SHARD_LABEL]: shard } } : {}) },
        spec: NAS_SPEC,
      });
    }
    for (const name of Object.keys(placement)) await nas.waitForCondition(name, "Ready", "True");

    expect(watchedBy("")).toEqual(["plain", "plain-2"]);
    expect(watchedBy("a")).toEqual(["in-a", "in-a-2"]);
    expect(watchedBy("b")).toEqual(["in-b"]);
    // One remote resource and one create per object, whoever served it.
    const admin = new EmulatorAdmin(emulator.url);
    const remote = (await admin.state()).nas.map((n) => n.name).sort();
    expect(remote).toEqual(Object.keys(placement).sort());
    const creates = (await admin.requests()).filter((r) => r.endpoint === "subscribeNas");
    expect(creates).toHaveLength(Object.keys(placement).length);

    const holders = await Promise.all(
      ["aidc-operator-leader", "aidc-operator-leader-a", "aidc-operator-leader-b"].map(
        async (name) =>
          (
            (await kube.get<KubeObject>(LEASES, { namespace, name }))?.spec as
              | { holderIdentity?: string }
              | undefined
          )?.holderIdentity,
      ),
    );
    expect(holders).toEqual(["", "a", "b"].map((s) => operators.get(s)?.manager.identity));
  });

  it("hands an object over to another shard when it is relabelled, without a second remote resource", async () => {
    const nas = new ObjectsOf(kube, nasVolumeCrd, namespace);
    const admin = new EmulatorAdmin(emulator.url);
    const before = await admin.requests();
    await kube.patch<KubeObject>(
      nasVolumeCrd,
      { namespace, name: "in-a" },
      { metadata: { labels: { [SHARD_LABEL]: "b" } } },
    );
    await eventually(async () =>
      watchedBy("b").includes("in-a") && !watchedBy("a").includes("in-a") ? true : undefined,
    );
    // Shard b serves it now: it answers a reconcile request the other shards cannot see.
    await nas.annotate("in-a", { "aidc.io/reconcile-requested-at": "moved-to-b" });
    await nas.waitFor(
      "in-a",
      (o) =>
        (o.status as { lastHandledReconcileAt?: string }).lastHandledReconcileAt === "moved-to-b",
    );
    // Unlabelled, it goes to the unsharded operator.
    await kube.patch<KubeObject>(
      nasVolumeCrd,
      { namespace, name: "in-a-2" },
      { metadata: { labels: { [SHARD_LABEL]: null } } },
    );
    await eventually(async () => (watchedBy("").includes("in-a-2") ? true : undefined));
    await nas.waitForCondition("in-a-2", "Ready", "True");
    expect(watchedBy("a")).toEqual([]);

    const remote = (await admin.state()).nas.map((n) => n.name).sort();
    expect(remote).toEqual(["in-a", "in-a-2", "in-b", "plain", "plain-2"]);
    const since = before.at(-1)?.seq ?? 0;
    expect(
      (await admin.requests()).filter((r) => r.seq > since && r.endpoint === "subscribeNas"),
    ).toEqual([]);
  });

  it("keeps a ServiceConnection while a shard's objects use it, on that shard's own finalizer", async () => {
    const nas = new ObjectsOf(kube, nasVolumeCrd, namespace);
    const key = "shards-tenant-key-0001";
    emulator.tenants.set("shards-tenant", key);
    const conn = `${namespace}-conn`;
    await kube.create<KubeObject>(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "tenant-key", namespace },
      data: { apiKey: Buffer.from(key).toString("base64") },
    });
    await kube.create<KubeObject>(serviceConnectionCrd, {
      apiVersion: "aidc.io/v1alpha1",
      kind: "ServiceConnection",
      metadata: { name: conn },
      spec: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        apiKeySecretRef: { namespace, name: "tenant-key", key: "apiKey" },
        allowedNamespaces: { names: [namespace] },
      },
    });
    await kube.create<KubeObject>(nasVolumeCrd, {
      apiVersion: "aidc.io/v1alpha1",
      kind: "NasVolume",
      metadata: { name: "conn-user", namespace, labels: { [SHARD_LABEL]: "a" } },
      spec: { ...NAS_SPEC, connectionRef: { name: conn } },
    });
    await nas.waitForCondition("conn-user", "Ready", "True");
    const connection = () =>
      kube.get<KubeObject>(serviceConnectionCrd, { namespace: "", name: conn });
    // Shard a holds it; the unsharded operator, which sees none of its users, does not.
    await eventually(async () => {
      const f = (await connection())?.metadata?.finalizers ?? [];
      return f.includes("aidc.io/serviceconnection-a") ? f : undefined;
    });
    expect((await connection())?.metadata?.finalizers).toEqual(["aidc.io/serviceconnection-a"]);

    await kube.delete(serviceConnectionCrd, { namespace: "", name: conn });
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await connection())?.metadata?.deletionTimestamp).toBeDefined();
    await nas.delete("conn-user");
    await nas.waitForGone("conn-user");
    await eventually(async () => ((await connection()) === undefined ? true : undefined));
  });
});
