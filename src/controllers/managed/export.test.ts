/**
 * A renamed or removed spec.exportTo name in the managed loop: what the export step
 * wrote under the old name (owned and labelled) is deleted before the status write
 * records the new name, so a crash between the two leaves the old name recorded and a
 * later reconcile (a new process) deletes it then; one the object did not write stays.
 */
import { describe, expect, it } from "vitest";
import { client, KEY, loop, RES, world } from "../../../test/support/managed-world.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import { ANNOTATIONS } from "./decisions.js";
import { EXPORTED_LABEL } from "./export.js";

const UID = "uid-1";

/** A ConfigMap or Secret of the namespace, written for the object `owner` (or by a user). */
const core = (plural: string, name: string, owner?: string): KubeObject => ({
  metadata: {
    name,
    namespace: KEY.namespace,
    ...(owner
      ? {
          labels: { [EXPORTED_LABEL]: RES.kind.toLowerCase() },
          ownerReferences: [{ uid: owner, controller: true }],
        }
      : {}),
  },
  data: { plural },
});

/**
 * The bound object of `exportTo`, its status recording `recorded`, beside the core
 * objects `existing`: the world's API server also answers GET, POST and DELETE of
 * ConfigMaps and Secrets, each recorded in `w.calls` (`<verb> <plural>/<name>`);
 * `failStatusWrites` makes the next status writes fail (a crash before them).
 */
function setup(
  exportTo: Record<string, string> | undefined,
  recorded: Record<string, string>,
  existing: KubeObject[],
) {
  const w = world(exportTo ? { exportTo } : {}, { [ANNOTATIONS.externalId]: "id-1" });
  w.set((o) => ({
    ...o,
    metadata: { ...o.metadata, uid: UID, finalizers: ["test.io/f"] },
    status: { ...recorded, conditions: [] },
  }));
  const store = new Map<string, KubeObject>();
  const keyOf = (res: ResourceDescriptor, name: string) => `${res.plural}/${name}`;
  for (const o of existing) {
    store.set(`${(o.data as { plural: string }).plural}/${o.metadata?.name}`, o);
  }
  const kube = w.ctx.kube as unknown as Record<string, unknown>;
  const patch = kube.patch as (...a: unknown[]) => Promise<unknown>;
  let failStatusWrites = 0;
  Object.assign(kube, {
    get: async (res: ResourceDescriptor, key: { name: string }) => {
      w.calls.push(`get ${keyOf(res, key.name)}`);
      return store.get(keyOf(res, key.name));
    },
    create: async (res: ResourceDescriptor, o: KubeObject) => {
      w.calls.push(`create ${keyOf(res, o.metadata?.name ?? "")}`);
      store.set(keyOf(res, o.metadata?.name ?? ""), o);
      return o;
    },
    delete: async (res: ResourceDescriptor, key: { name: string }) => {
      w.calls.push(`delete ${keyOf(res, key.name)}`);
      return store.delete(keyOf(res, key.name));
    },
    patch: async (...a: unknown[]) => {
      if (failStatusWrites > 0) {
        failStatusWrites -= 1;
        throw new Error("the process stops here");
      }
      return patch(...a);
    },
  });
  /** The export names the status records now. */
  const recordedNow = () => {
    const status = (w.obj?.status ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(status).filter(([k]) => k.startsWith("exported")));
  };
  return {
    w,
    store,
    recordedNow,
    failNextStatusWrite: () => {
      failStatusWrites = 1;
    },
  };
}

/** A loop (a fresh process: its export memory empty) of a kind exporting a ConfigMap, and with `secrets` a Secret. */
const kindLoop = (w: ReturnType<typeof world>, secrets: boolean) =>
  loop(
    client(() => w),
    {
      exportValues: () => ({ ID: "id-1" }),
      ...(secrets ? { exportSecretValues: async () => ({ data: { KEY: "k" } }) } : {}),
    },
  );

describe("a renamed or removed spec.exportTo name", () => {
  const cases: {
    reason: string;
    exportTo: Record<string, string> | undefined;
    recorded: Record<string, string>;
    existing: KubeObject[];
    secrets: boolean;
    calls: string[];
    left: string[];
    status: Record<string, string>;
  }[] = [
    {
      reason:
        "a renamed configMapName: the old ConfigMap goes before the status write, the new is written after it",
      exportTo: { configMapName: "new" },
      recorded: { exportedConfigMapName: "old" },
      existing: [core("configmaps", "old", UID)],
      secrets: false,
      calls: [
        "get configmaps/old",
        "delete configmaps/old",
        "write status",
        "create configmaps/new",
      ],
      left: ["configmaps/new"],
      status: { exportedConfigMapName: "new" },
    },
    {
      reason: "a removed exportTo: the old ConfigMap goes and the status drops the name",
      exportTo: undefined,
      recorded: { exportedConfigMapName: "old" },
      existing: [core("configmaps", "old", UID)],
      secrets: false,
      calls: ["get configmaps/old", "delete configmaps/old", "write status"],
      left: [],
      status: {},
    },
    {
      reason: "a ConfigMap of the old name that a user made (no ownerReference) is left alone",
      exportTo: { configMapName: "new" },
      recorded: { exportedConfigMapName: "old" },
      existing: [core("configmaps", "old")],
      secrets: false,
      calls: ["get configmaps/old", "write status", "create configmaps/new"],
      left: ["configmaps/old", "configmaps/new"],
      status: { exportedConfigMapName: "new" },
    },
    {
      reason: "one owned by another object is left alone too",
      exportTo: { configMapName: "new" },
      recorded: { exportedConfigMapName: "old" },
      existing: [core("configmaps", "old", "uid-2")],
      secrets: false,
      calls: ["get configmaps/old", "write status", "create configmaps/new"],
      left: ["configmaps/old", "configmaps/new"],
      status: { exportedConfigMapName: "new" },
    },
    {
      reason:
        "a renamed secretName: the old Secret goes before the status write, the new is written after it",
      exportTo: { configMapName: "cm", secretName: "new-keys" },
      recorded: { exportedConfigMapName: "cm", exportedSecretName: "old-keys" },
      existing: [core("configmaps", "cm", UID), core("secrets", "old-keys", UID)],
      secrets: true,
      calls: [
        "get secrets/old-keys",
        "delete secrets/old-keys",
        "write status",
        "create configmaps/cm",
        "create secrets/new-keys",
      ],
      left: ["configmaps/cm", "secrets/new-keys"],
      status: { exportedConfigMapName: "cm", exportedSecretName: "new-keys" },
    },
    {
      reason:
        "a kind that writes no Secrets (the operator's export off) never deletes one, and the status drops its name",
      exportTo: { configMapName: "cm", secretName: "new-keys" },
      recorded: { exportedConfigMapName: "cm", exportedSecretName: "old-keys" },
      existing: [core("configmaps", "cm", UID), core("secrets", "old-keys", UID)],
      secrets: false,
      calls: ["write status", "create configmaps/cm"],
      left: ["configmaps/cm", "secrets/old-keys"],
      status: { exportedConfigMapName: "cm" },
    },
  ];

  for (const c of cases) {
    it(c.reason, async () => {
      const { w, store, recordedNow } = setup(c.exportTo, c.recorded, c.existing);
      const { reconcile } = kindLoop(w, c.secrets);
      await reconcile(KEY, w.ctx);
      // Fresh memory: the ConfigMap of an unchanged name is created again over the
      // existing one (a 409 in a real API server, read and compared); here, replaced.
      expect(w.calls.filter((x) => x !== "observe")).toEqual(c.calls);
      expect([...store.keys()].sort()).toEqual([...c.left].sort());
      expect(recordedNow()).toEqual(c.status);
    });
  }

  it("after a crash between the old one's delete and the status write, the old name is still recorded, and the new one is recorded only once a later reconcile found the old gone", async () => {
    const { w, store, recordedNow, failNextStatusWrite } = setup(
      { configMapName: "new" },
      { exportedConfigMapName: "old" },
      [core("configmaps", "old", UID)],
    );
    failNextStatusWrite();
    await expect(kindLoop(w, false).reconcile(KEY, w.ctx)).rejects.toThrow("the process stops");
    expect(store.has("configmaps/old")).toBe(false);
    expect(store.has("configmaps/new")).toBe(false);
    expect(recordedNow()).toEqual({ exportedConfigMapName: "old" });
    // Meanwhile someone else makes a ConfigMap of the old name: never the operator's to delete.
    store.set("configmaps/old", core("configmaps", "old"));
    w.calls.length = 0;
    await kindLoop(w, false).reconcile(KEY, w.ctx);
    expect(w.calls.filter((x) => x !== "observe")).toEqual([
      "get configmaps/old",
      "write status",
      "create configmaps/new",
    ]);
    expect(recordedNow()).toEqual({ exportedConfigMapName: "new" });
    expect([...store.keys()].sort()).toEqual(["configmaps/new", "configmaps/old"]);
  });

  it("writes no export name and calls nothing for an object without spec.exportTo", async () => {
    const { w, recordedNow } = setup(undefined, {}, []);
    await kindLoop(w, true).reconcile(KEY, w.ctx);
    expect(w.calls.filter((x) => x !== "observe")).toEqual(["write status"]);
    expect(recordedNow()).toEqual({});
  });
});
