import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { FileSystemOperations } from "../../src/service/kinds/filesystem.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

interface FsStatus {
  fileSystemId?: string;
  phase?: string;
  mountsReady?: string;
  mounts?: {
    name: string;
    state: string;
    mountId?: string;
    address?: string;
    instanceId?: string;
  }[];
  otherMounts?: { mountId: string }[];
}
const statusOf = (o: KubeObject | undefined) => (o?.status ?? {}) as FsStatus;

/** The FileSystem controller against a real API server and the emulator. */
describe("FileSystem controller", () => {
  let op: TestOperator;
  let fs: ObjectsOf;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "filesystem");
    op = await startTestOperator({
      controllers: [
        (deps) => fileSystemController(deps, { visibilityGraceMs: 1_000 }),
        cciInstanceController,
      ],
      namespaces: [namespace],
      emulatorOptions: { fileStorageDelayMs: 300 },
      // CciInstances poll rarely: what they show of the storage comes from its watch.
      config: { pollIntervalMs: { default: 500, CciInstance: 600_000 } },
    });
    fs = new ObjectsOf(op.kube, fileSystemCrd, namespace);
    await new ObjectsOf(op.kube, cciInstanceCrd, namespace).create("alice", {
      instanceId: "cci-0001",
    });
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  /** The requests that change something (not GET) about file system `name` / `id`, in order. */
  const requestsFor = async (name: string, id: string) => {
    const all = await op.admin.requests();
    return all
      .filter((r) => r.method !== "GET")
      .filter(
        (r) =>
          (r.endpoint === "createFileSystem" && (r.body as { name?: string }).name === name) ||
          r.path.startsWith(`/v1/file-systems/${id}`),
      )
      .map(
        (r) =>
          `${r.method} ${r.path.replace(id, "{id}").replace(/mnt-[A-Za-z0-9-]*\d{6}/, "{mountId}")} ${r.status}`,
      );
  };

  it("creates, mounts on a CciInstance, removes the mount, then deletes, with the exact requests in order", async () => {
    await fs.create("shared", {
      sizeGB: 100,
      protocol: "NFS",
      description: "team files",
      mounts: [
        { name: "notebook", target: { cciInstanceRef: { name: "alice" } }, mountPath: "/shared" },
      ],
      deletionPolicy: "Delete",
    });
    const ready = await fs.waitForCondition("shared", "Ready", "True", "Available");
    const id = statusOf(ready).fileSystemId ?? "";
    expect(id).toMatch(/^fs-/);
    expect(statusOf(ready)).toMatchObject({
      phase: "Ready",
      mountsReady: "1/1",
      mounts: [
        {
          name: "notebook",
          state: "Mounted",
          instanceId: "cci-0001",
          address: expect.stringContaining(`:/${id}`),
          mountPath: "/shared",
        },
      ],
    });
    expect(conditionOf(ready, "ReferencesResolved")).toMatchObject({ status: "True" });
    // The CciInstance shows the mount (from the FileSystem's status, no service call).
    const ccis = new ObjectsOf(op.kube, cciInstanceCrd, namespace);
    const storageOf = (o: KubeObject) =>
      (
        (o.status as { attachedStorage?: { kind: string; name: string }[] } | undefined)
          ?.attachedStorage ?? []
      ).filter((a) => a.kind === "FileSystem" && a.name === "shared");
    const alice = await ccis.waitFor("alice", (o) => storageOf(o).length === 1);
    expect(storageOf(alice)).toEqual([
      { kind: "FileSystem", name: "shared", id, state: "Mounted", mountPath: "/shared" },
    ]);
    await fs.patchSpec("shared", { mounts: [] });
    const unmounted = await fs.waitFor("shared", (o) => (statusOf(o).mounts ?? []).length === 0);
    await ccis.waitFor("alice", (o) => storageOf(o).length === 0);
    expect(statusOf(unmounted).mountsReady).toBe("0/0");
    expect((await new FileSystemOperations(op.service).get(id)).mounts).toEqual([]);
    await fs.delete("shared");
    await fs.waitForGone("shared");
    expect(await requestsFor("shared", id)).toEqual([
      "POST /v1/file-systems 200",
      "POST /v1/file-systems/{id}/mounts 200",
      "DELETE /v1/file-systems/{id}/mounts/{mountId} 200",
      "DELETE /v1/file-systems/{id} 200",
    ]);
    expect((await op.admin.state()).fileSystems.filter((f) => f.id === id)).toEqual([]);
  });

  it("removes its mounts before a Delete and sends the delete only once none is left", async () => {
    await fs.create("busy", {
      sizeGB: 10,
      mounts: [
        { name: "a", target: { instanceId: "cci-0002" } },
        { name: "b", target: { instanceId: "cci-0004" } },
      ],
      deletionPolicy: "Delete",
    });
    const ready = await fs.waitForCondition("busy", "Ready", "True");
    const id = statusOf(ready).fileSystemId ?? "";
    expect(statusOf(ready).mountsReady).toBe("2/2");
    await fs.delete("busy");
    await fs.waitForGone("busy");
    const changes = await requestsFor("busy", id);
    expect(changes.slice(0, 3)).toEqual([
      "POST /v1/file-systems 200",
      "POST /v1/file-systems/{id}/mounts 200",
      "POST /v1/file-systems/{id}/mounts 200",
    ]);
    expect(changes.slice(3).sort()).toEqual(
      [
        "DELETE /v1/file-systems/{id} 200",
        "DELETE /v1/file-systems/{id}/mounts/{mountId} 200",
        "DELETE /v1/file-systems/{id}/mounts/{mountId} 200",
      ].sort(),
    );
    // The file system's delete is the last request and was never refused for its mounts.
    expect(changes.at(-1)).toBe("DELETE /v1/file-systems/{id} 200");
  });

  it("makes a mount whose create answer was lost only once", async () => {
    op.emulator.faults.set([
      { kind: "error", endpoint: "createFileSystemMount", acting: true, httpStatus: 500, times: 1 },
    ]);
    try {
      await fs.create("lost", {
        sizeGB: 10,
        mounts: [{ name: "a", target: { instanceId: "cci-0003" } }],
      });
      const ready = await fs.waitForCondition("lost", "Ready", "True");
      const id = statusOf(ready).fileSystemId ?? "";
      const mounts = (await requestsFor("lost", id)).filter((r) => r.includes("/mounts"));
      expect(mounts).toEqual(["POST /v1/file-systems/{id}/mounts 500"]);
      expect(statusOf(ready).mounts?.[0]).toMatchObject({ name: "a", state: "Mounted" });
    } finally {
      op.emulator.faults.clear();
    }
  });

  it("shows a mount it did not make and never removes it", async () => {
    await fs.create("foreign", { sizeGB: 10, mounts: [] });
    const ready = await fs.waitForCondition("foreign", "Ready", "True");
    const id = statusOf(ready).fileSystemId ?? "";
    const { id: mountId } = await new FileSystemOperations(op.service).mount(id, {
      instanceId: "cci-0001",
    });
    const shown = await fs.waitFor("foreign", (o) => (statusOf(o).otherMounts ?? []).length === 1);
    expect(statusOf(shown).otherMounts).toEqual([{ mountId, instanceId: "cci-0001" }]);
    expect(conditionOf(shown, "Ready")?.status).toBe("True");
    expect((await requestsFor("foreign", id)).filter((r) => r.startsWith("DELETE"))).toEqual([]);
  });

  it("reports a removal the service cannot do, and holds a Delete until the policy is Orphan", async () => {
    await fs.create("stuck", {
      sizeGB: 10,
      mounts: [{ name: "a", target: { instanceId: "cci-0002" } }],
      deletionPolicy: "Delete",
    });
    const ready = await fs.waitForCondition("stuck", "Ready", "True");
    const id = statusOf(ready).fileSystemId ?? "";
    await op.admin.configure({ missingOperations: ["deleteFileSystem", "deleteFileSystemMount"] });
    try {
      await fs.patchSpec("stuck", { mounts: [] });
      const reported = await fs.waitForCondition(
        "stuck",
        "Synced",
        "False",
        "MountRemovalUnavailable",
      );
      expect(conditionOf(reported, "Synced")?.message).toContain("deleteFileSystemMount");
      expect(statusOf(reported).mounts).toMatchObject([{ name: "a", state: "RemovalNotPossible" }]);
      expect((await new FileSystemOperations(op.service).get(id)).mounts).toHaveLength(1);
      await fs.patchSpec("stuck", { mounts: [{ name: "a", target: { instanceId: "cci-0002" } }] });
      await fs.waitForCondition("stuck", "Synced", "True");
      await fs.delete("stuck");
      const held = await fs.waitForCondition("stuck", "Synced", "False", "MountRemovalUnavailable");
      expect(held.metadata?.finalizers).toContain("aidc.io/filesystem");
      await fs.patchSpec("stuck", { deletionPolicy: "Orphan" });
      await fs.waitForGone("stuck");
      const remote = await new FileSystemOperations(op.service).get(id);
      expect(remote.mounts).toHaveLength(1);
    } finally {
      await op.admin.configure({ missingOperations: [] });
    }
  });

  it("waits for a CciInstance that does not exist yet, creating nothing", async () => {
    await fs.create("waits", {
      sizeGB: 10,
      mounts: [{ name: "a", target: { cciInstanceRef: { name: "bob" } } }],
    });
    const waiting = await fs.waitForCondition(
      "waits",
      "ReferencesResolved",
      "False",
      "MountTargetNotFound",
    );
    expect(conditionOf(waiting, "ReferencesResolved")?.message).toContain("CciInstance bob");
    expect(
      (await op.admin.requests({ endpoint: "createFileSystem" })).filter(
        (r) => (r.body as { name?: string }).name === "waits",
      ),
    ).toEqual([]);
    await new ObjectsOf(op.kube, cciInstanceCrd, namespace).create("bob", {
      instanceId: "cci-0002",
    });
    const ready = await fs.waitForCondition("waits", "Ready", "True");
    expect(statusOf(ready).mounts).toMatchObject([
      { name: "a", state: "Mounted", instanceId: "cci-0002" },
    ]);
  });

  it("under Observe, mounts nothing and shows the mount as not sent; Update back, mounts it", async () => {
    await fs.create("observed", { sizeGB: 10 });
    const made = await fs.waitForCondition("observed", "Ready", "True", "Available");
    const id = statusOf(made).fileSystemId ?? "";
    await fs.patchSpec("observed", {
      managementPolicies: ["Observe"],
      mounts: [{ name: "nb", target: { cciInstanceRef: { name: "alice" } } }],
    });
    const held = await fs.waitForCondition("observed", "Synced", "False", "DriftDetected");
    expect(conditionOf(held, "Synced")?.message).toContain("differs from the spec in mounts;");
    const noUpdate = "not mounted; spec.managementPolicies has no Update, so it is not changed";
    const shown = await fs.waitFor("observed", (o) => statusOf(o).mounts?.[0]?.state === "Pending");
    expect(statusOf(shown).mounts).toEqual([
      { name: "nb", state: "Pending", instanceId: "cci-0001", message: noUpdate },
    ]);
    expect(conditionOf(shown, "Ready")).toMatchObject({
      status: "False",
      reason: "MountsPending",
      message: `mounts not mounted yet: nb (Pending: ${noUpdate})`,
    });
    expect(await requestsFor("observed", id)).toEqual(["POST /v1/file-systems 200"]);
    await fs.patchSpec("observed", { managementPolicies: ["*"] });
    await fs.waitForCondition("observed", "Ready", "True", "Available");
    expect(await requestsFor("observed", id)).toEqual([
      "POST /v1/file-systems 200",
      "POST /v1/file-systems/{id}/mounts 200",
    ]);
  });

  it("is not Ready while a mount of the spec is at another mountPath (here kept so: Observe)", async () => {
    const mounts = [{ name: "nb", target: { cciInstanceRef: { name: "alice" } }, mountPath: "/a" }];
    await fs.create("moved", { sizeGB: 10, mounts });
    await fs.waitForCondition("moved", "Ready", "True", "Available");
    await fs.patchSpec("moved", {
      managementPolicies: ["Observe"],
      mounts: [{ ...mounts[0], mountPath: "/b" }],
    });
    const held = await fs.waitForCondition("moved", "Ready", "False", "MountsPending");
    expect(statusOf(held)).toMatchObject({ phase: "Mounting", mountsReady: "0/1" });
    expect(conditionOf(held, "Ready")?.message).toContain(
      "nb (Mounted: mounted at /a; spec asks for /b;",
    );
  });
});
