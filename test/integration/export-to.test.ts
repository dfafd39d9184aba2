/**
 * spec.exportTo against a real API server (with the garbage collector of
 * kube-controller-manager) and the emulator: the ConfigMap of a NasVolume's connection
 * details, owned by it, read by a Pod object's env, following a remote change, left
 * alone when someone else owns it, and deleted with its owner.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG_MAPS, EXPORTED_LABEL } from "../../src/controllers/managed/export.js";
import { nasVolumeControllerWith } from "../../src/controllers/nasvolume/controller.js";
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
  let nas: ObjectsOf;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "export-to");
    op = await startTestOperator({
      controllers: [nasVolumeControllerWith({ visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  const configMap = (name: string) => op.kube.get<ConfigMap>(CONFIG_MAPS, { namespace, name });
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
    await op.kube.create<ConfigMap>(CONFIG_MAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "taken", namespace },
      data: { OWNER: "someone else" },
    });
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
});
