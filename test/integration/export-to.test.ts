/**
 * spec.exportTo against a real API server (with the garbage collector of
 * kube-controller-manager) and the emulator: the ConfigMap of a NasVolume's connection
 * details, owned by it, read by a Pod object's env, following a remote change, left
 * alone when someone else owns it, and deleted with its owner; a BlockVolume's following
 * its attachment, and a FileSystem's its mounts; one deleted or edited by hand written
 * again within 20 polls, and none written at idle; on a renamed configMapName, the one
 * written under the old name deleted (a CciInstance's too), never a user's ConfigMap of
 * that name, after a restart too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { CONFIG_MAPS, EXPORTED_LABEL } from "../../src/controllers/managed/export.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { EVENTS, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const PODS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "pods",
  kind: "Pod",
  namespaced: true,
};

type ConfigMap = KubeObject & { data?: Record<string, string> };
type EnvVar = { name: string; valueFrom?: { configMapKeyRef?: { name: string; key: string } } };
type PodObject = KubeObject & {
  spec: { containers: { name: string; image?: string; env?: EnvVar[] }[] };
};

describe("spec.exportTo", () => {
  let op: TestOperator;
  let restarted: TestOperator | undefined;
  let nas: ObjectsOf;
  let namespace = "";

  const start = (emulator?: TestOperator["emulator"]) =>
    startTestOperator({
      controllers: [
        (deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 }),
        (deps) => blockVolumeController(deps, { visibilityGraceMs: 1_000 }),
        (deps) => fileSystemController(deps, { visibilityGraceMs: 1_000 }),
        cciInstanceController,
      ],
      namespaces: [namespace],
      emulatorOptions: { volumeTransitionMs: 200, fileStorageDelayMs: 200 },
      ...(emulator ? { emulator } : {}),
    });

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "export-to");
    op = await start();
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    const ccis = new ObjectsOf(op.kube, cciInstanceCrd, namespace);
    await ccis.create("alice", { instanceId: "cci-0001" });
    await ccis.create("bob", { instanceId: "cci-0002" });
  }, 60_000);

  afterAll(async () => {
    await restarted?.stop();
    await op?.stop();
  });

  const configMap = (name: string) => op.kube.get<ConfigMap>(CONFIG_MAPS, { namespace, name });
  /** Creates the ConfigMap `name` as a user would, without an owner, its data `{ OWNER: owner }`. */
  const userConfigMap = (name: string, owner: string) =>
    op.kube.create<ConfigMap>(CONFIG_MAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace },
      data: { OWNER: owner },
    });
  /** The values a container of `pod` gets from its configMapKeyRef env (no kubelet: resolved here). */
  const envOf = async (pod: PodObject): Promise<Record<string, string | undefined>> => {
    const out: Record<string, string | undefined> = {};
    for (const e of pod.spec.containers[0]?.env ?? []) {
      const ref = e.valueFrom?.configMapKeyRef;
      if (ref) out[e.name] = (await configMap(ref.name))?.data?.[ref.key];
    }
    return out;
  };

  it("writes a ConfigMap the NasVolume owns, that a Pod's env reads, following a mount-path change, gone with the NasVolume", async () => {
    await nas.create("shared", {
      productCode: "nas.capacity.standard",
      mountPath: "/data/first",
      exportTo: { configMapName: "shared-nas" },
    });
    const ready = await nas.waitForCondition("shared", "Ready", "True");
    const storageId = (ready.status as { storageId?: string }).storageId;
    const cm = await eventually(async () => {
      const c = await configMap("shared-nas");
      return c?.data?.MOUNT_PATH ? c : undefined;
    });
    expect(cm.data).toEqual({ STORAGE_ID: storageId, MOUNT_PATH: "/data/first" });
    expect(cm.metadata?.labels?.[EXPORTED_LABEL]).toBe("nasvolume");
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "NasVolume",
        name: "shared",
        uid: ready.metadata?.uid,
        controller: true,
      }),
    ]);

    const pod = await op.kube.create<PodObject>(PODS, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "reader", namespace },
      spec: {
        containers: [
          {
            name: "main",
            image: "registry.example.com/reader:1",
            env: [
              {
                name: "NAS_ID",
                valueFrom: { configMapKeyRef: { name: "shared-nas", key: "STORAGE_ID" } },
              },
              {
                name: "NAS_PATH",
                valueFrom: { configMapKeyRef: { name: "shared-nas", key: "MOUNT_PATH" } },
              },
            ],
          },
        ],
      },
    });
    expect(await envOf(pod)).toEqual({ NAS_ID: storageId, NAS_PATH: "/data/first" });

    await nas.patchSpec("shared", { mountPath: "/data/second" });
    await eventually(async () =>
      (await configMap("shared-nas"))?.data?.MOUNT_PATH === "/data/second" ? true : undefined,
    );
    expect(await envOf(pod)).toEqual({ NAS_ID: storageId, NAS_PATH: "/data/second" });

    await nas.delete("shared");
    await nas.waitForGone("shared");
    // The garbage collector follows the ownerReference.
    await eventually(async () => ((await configMap("shared-nas")) ? undefined : true), 60_000);
  }, 90_000);

  it("leaves a ConfigMap it does not own untouched and says so in a Warning event", async () => {
    await userConfigMap("taken", "someone else");
    await nas.create("second", {
      productCode: "nas.capacity.standard",
      exportTo: { configMapName: "taken" },
    });
    await nas.waitForCondition("second", "Ready", "True");
    await eventually(async () => {
      const events = (
        await op.kube.list<KubeObject & { reason?: string; regarding?: { name?: string } }>(
          EVENTS,
          namespace,
        )
      ).items;
      return events.some(
        (e) => e.reason === "ConnectionDetailsConflict" && e.regarding?.name === "second",
      )
        ? true
        : undefined;
    });
    expect((await configMap("taken"))?.data).toEqual({ OWNER: "someone else" });
  }, 60_000);

  /** Waits until the ConfigMap `name` has exactly `data`. */
  const exported = (name: string, data: Record<string, string>) =>
    eventually(async () => {
      const c = await configMap(name);
      return c && JSON.stringify(c.data ?? {}) === JSON.stringify(data) ? c : undefined;
    }, 30_000);

  it("writes a BlockVolume's id and attached instance, following a move and a detach", async () => {
    const volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    await volumes.create("scratch", {
      sizeGB: 20,
      volumeType: "ssd",
      attachTo: { cciInstanceRef: { name: "alice" } },
      exportTo: { configMapName: "scratch-volume" },
    });
    const attached = await volumes.waitForCondition("scratch", "Ready", "True", "Attached", 30_000);
    const volumeId = String((attached.status as { volumeId?: string }).volumeId);
    const cm = await exported("scratch-volume", {
      ATTACHED_INSTANCE_ID: "cci-0001",
      VOLUME_ID: volumeId,
    });
    expect(cm.metadata?.labels?.[EXPORTED_LABEL]).toBe("blockvolume");
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "BlockVolume",
        uid: attached.metadata?.uid,
        controller: true,
      }),
    ]);
    await volumes.patchSpec("scratch", { attachTo: { cciInstanceRef: { name: "bob" } } });
    await exported("scratch-volume", { ATTACHED_INSTANCE_ID: "cci-0002", VOLUME_ID: volumeId });
    // Detached, the key goes (not an empty value).
    await volumes.patchSpec("scratch", { attachTo: null });
    await exported("scratch-volume", { VOLUME_ID: volumeId });
  }, 90_000);

  it("writes a FileSystem's id, protocol and each mount's address, following a removed mount", async () => {
    const fileSystems = new ObjectsOf(op.kube, fileSystemCrd, namespace);
    await fileSystems.create("team", {
      sizeGB: 100,
      protocol: "NFS",
      mounts: [
        { name: "notebook", target: { cciInstanceRef: { name: "alice" } }, mountPath: "/shared" },
      ],
      exportTo: { configMapName: "team-files" },
    });
    const ready = await fileSystems.waitFor(
      "team",
      (o) => (o.status as { mountsReady?: string } | undefined)?.mountsReady === "1/1",
      30_000,
    );
    const status = ready.status as { fileSystemId?: string; mounts?: { address?: string }[] };
    const id = String(status.fileSystemId);
    const address = String(status.mounts?.[0]?.address);
    expect(address).toContain(`:/${id}`);
    const cm = await exported("team-files", {
      FILE_SYSTEM_ID: id,
      MOUNT_notebook_ADDRESS: address,
      PROTOCOL: "NFS",
    });
    expect(cm.metadata?.labels?.[EXPORTED_LABEL]).toBe("filesystem");
    await fileSystems.patchSpec("team", { mounts: [] });
    await exported("team-files", { FILE_SYSTEM_ID: id, PROTOCOL: "NFS" });
  }, 90_000);

  it("writes again within 20 polls a ConfigMap deleted or edited by hand, and nothing while it is intact", async () => {
    const names = ["scratch-volume", "team-files"];
    const before = await Promise.all(names.map(configMap));
    // Several polls (500 ms) with nothing missing: no write.
    await new Promise((r) => setTimeout(r, 3_000));
    const idle = await Promise.all(names.map(configMap));
    expect(idle.map((c) => c?.metadata?.resourceVersion)).toEqual(
      before.map((c) => c?.metadata?.resourceVersion),
    );
    for (const name of names) await op.kube.delete(CONFIG_MAPS, { namespace, name });
    for (const [i, name] of names.entries()) {
      const back = await exported(name, before[i]?.data ?? {});
      expect(back.metadata?.labels?.[EXPORTED_LABEL]).toBe(
        idle[i]?.metadata?.labels?.[EXPORTED_LABEL],
      );
    }
    await op.kube.patch(
      CONFIG_MAPS,
      { namespace, name: "team-files" },
      { data: { PROTOCOL: "SMB" } },
    );
    await exported("team-files", before[1]?.data ?? {});
  }, 60_000);
  it("on a renamed configMapName, deletes the ConfigMap it wrote under the old name, never a user's, after a restart too", async () => {
    const gone = (name: string) =>
      eventually(async () => ((await configMap(name)) ? undefined : true), 30_000);
    const recorded = (name: string) =>
      nas.waitFor(
        "moving",
        (o) =>
          (o.status as { exportedConfigMapName?: string } | undefined)?.exportedConfigMapName ===
          name,
        30_000,
      );
    await userConfigMap("users-own", "a user");
    await nas.create("moving", {
      productCode: "nas.capacity.standard",
      exportTo: { configMapName: "moving-1" },
    });
    const ready = await nas.waitForCondition("moving", "Ready", "True");
    const storageId = (ready.status as { storageId?: string }).storageId;
    const written = await eventually(async () => {
      const c = await configMap("moving-1");
      return c?.data?.STORAGE_ID === storageId ? c : undefined;
    }, 30_000);
    await recorded("moving-1");
    // Onto the user's ConfigMap's name: the old one goes, the user's is not written.
    await nas.patchSpec("moving", { exportTo: { configMapName: "users-own" } });
    await gone("moving-1");
    await recorded("users-own");
    // And on to a free name: the user's ConfigMap, now of the old name, stays as it was.
    await nas.patchSpec("moving", { exportTo: { configMapName: "moving-2" } });
    const moved = await exported("moving-2", written.data ?? {});
    expect(moved.metadata?.ownerReferences?.[0]).toMatchObject({
      uid: ready.metadata?.uid,
      controller: true,
    });
    await recorded("moving-2");
    expect((await configMap("users-own"))?.data).toEqual({ OWNER: "a user" });
    expect((await configMap("users-own"))?.metadata?.ownerReferences).toBeUndefined();

    // A CciInstance (its own reconciler) does the same.
    const ccis = new ObjectsOf(op.kube, cciInstanceCrd, namespace);
    await ccis.patchSpec("alice", { exportTo: { configMapName: "alice-1" } });
    const first = await eventually(async () => {
      const c = await configMap("alice-1");
      return c?.data?.CCI_INSTANCE_ID ? c : undefined;
    }, 30_000);
    await ccis.patchSpec("alice", { exportTo: { configMapName: "alice-2" } });
    await exported("alice-2", first.data ?? {});
    await gone("alice-1");

    // The operator stops (its emulator stays), the name changes, another one starts:
    // the old name is in the status.
    await op.manager.stop();
    await nas.patchSpec("moving", { exportTo: null });
    await ccis.patchSpec("alice", { exportTo: { configMapName: "alice-3" } });
    restarted = await start(op.emulator);
    await gone("moving-2");
    await exported("alice-3", first.data ?? {});
    await gone("alice-2");
    await nas.waitFor(
      "moving",
      (o) =>
        (o.status as { exportedConfigMapName?: string } | undefined)?.exportedConfigMapName ===
        undefined,
      30_000,
    );
    expect((await configMap("users-own"))?.data).toEqual({ OWNER: "a user" });
  }, 120_000);
});
