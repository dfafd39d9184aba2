/**
 * The CciInstance controller against a real API server and the emulator: binding,
 * status sync, error details, image saving, deletion, and the calls per resync.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { CONFIG_MAPS } from "../../src/controllers/managed/export.js";
import type { CciInstance, CciInstanceSpec } from "../../src/crds/cciinstance.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/index.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 500;
const EVENTS: ResourceDescriptor = {
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
};

const cciController: ControllerFactory = (deps) =>
  cciInstanceController(deps, { saveBackoff: { baseMs: 300, maxMs: 1_000 } });

interface EventObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { name?: string };
}

describe("CciInstance controller", () => {
  let op: TestOperator;
  let ns: string;

  beforeAll(async () => {
    ns = await createNamespace(adminKubeConfig(), "cci");
    op = await startTestOperator({
      controllers: [cciController],
      namespaces: [ns],
      pollIntervalMs: POLL_MS,
      emulatorOptions: { saveImageDurationMs: 1_500 },
    });
    await op.admin.seed({
      cci: [
        { id: "byname-1", name: "unique-notebook" },
        { id: "twin-1", name: "twin", aidcId: 1 },
        { id: "twin-2", name: "twin", aidcId: 2, status: "STOPPED" },
        { id: "change-1", name: "changing" },
        {
          id: "err-1",
          name: "failing",
          status: "ERROR",
          subStatus: "CREATE_VOLUME_FAILED",
          errorDetails: {
            instanceStatus: "FAILED",
            instanceSubStatus: "CREATE_VOLUME_FAILED",
            errorDescription: "The system disk could not be created.",
            suggestion: "Release the instance and create it again.",
            errorDetail: "pool ssd-01 timed out",
          },
        },
        { id: "img-1", name: "imaging" },
        { id: "img-2", name: "imaging-retry" },
        { id: "del-1", name: "deleting" },
      ],
    });
  });

  afterAll(async () => {
    await op?.stop();
  });

  const create = (name: string, spec: CciInstanceSpec) =>
    op.kube.create(cciInstanceCrd, { metadata: { name, namespace: ns }, spec });
  const read = (name: string) =>
    op.kube.get<CciInstance & { [k: string]: unknown }>(cciInstanceCrd, {
      namespace: ns,
      name,
    });
  const condition = (obj: CciInstance | undefined, type: string) =>
    obj?.status?.conditions?.find((c) => c.type === type);
  const events = async (name: string) =>
    (await op.kube.list<EventObject & { [k: string]: unknown }>(EVENTS, ns)).items.filter(
      (e) => e.regarding?.name === name,
    );

  it("binds by spec.instanceId and mirrors the instance, with the id in status and annotation", async () => {
    await create("by-id", { instanceId: "cci-0001", exportTo: { configMapName: "notebook" } });
    const obj = await eventually(async () => {
      const o = await read("by-id");
      return condition(o, "Ready")?.status === "True" ? o : undefined;
    });
    expect(obj.metadata.annotations?.["aidc.io/external-id"]).toBe("cci-0001");
    expect(obj.status).toMatchObject({
      instanceId: "cci-0001",
      name: "notebook-alice",
      remoteStatus: "RUNNING",
      urls: { jupyter: "https://jupyter.emulator.local/cci-0001" },
      health: { jupyter: true, vscode: true },
      resource: { gpuName: "NVIDIA A100 80GB", productCode: "cci.gpu.a100.1" },
      createdTime: "2025-01-06T09:00:00Z",
      price: "11.00",
      priceUnit: 1,
      priority: 3,
      tenant: "Emulated Tenant",
      creator: "Emulated User",
      chargeMethod: 1,
      storageSize: 200,
      envKeys: ["JUPYTER_TOKEN_FILE"],
    });
    // Env names only: a value may be a secret.
    expect(JSON.stringify(obj.status)).not.toContain("/etc/jupyter/token");
    expect(condition(obj, "Bound")).toMatchObject({ status: "True", reason: "Bound" });
    expect(condition(obj, "Synced")).toMatchObject({ status: "True" });
    // spec.exportTo: the access addresses for workloads, in a ConfigMap the object owns.
    const cm = await eventually(() =>
      op.kube.get<KubeObject & { data?: Record<string, string> }>(CONFIG_MAPS, {
        namespace: ns,
        name: "notebook",
      }),
    );
    expect(cm.data).toEqual({
      CCI_INSTANCE_ID: "cci-0001",
      WEBSSH_URL: "https://ssh.emulator.local/cci-0001",
      JUPYTER_URL: "https://jupyter.emulator.local/cci-0001",
      VSCODE_URL: "https://vscode.emulator.local/cci-0001",
    });
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "CciInstance", uid: obj.metadata.uid, controller: true }),
    ]);
    // Addresses changed in the service: the ConfigMap follows on the next poll (the list).
    await op.admin.setCciState("cci-0001", {
      fields: { jupyterUrl: "https://jupyter.emulator.local/moved", webSSHUrl: null },
    });
    const followed = await eventually(async () => {
      const now = await op.kube.get<KubeObject & { data?: Record<string, string> }>(CONFIG_MAPS, {
        namespace: ns,
        name: "notebook",
      });
      return now?.data?.JUPYTER_URL?.endsWith("/moved") ? now : undefined;
    });
    expect(followed.data).toEqual({
      CCI_INSTANCE_ID: "cci-0001",
      JUPYTER_URL: "https://jupyter.emulator.local/moved",
      VSCODE_URL: "https://vscode.emulator.local/cci-0001",
    });
  });

  it("binds by a name that exactly one instance has", async () => {
    await create("by-name", { name: "unique-notebook" });
    const obj = await eventually(async () => {
      const o = await read("by-name");
      return o?.status?.instanceId ? o : undefined;
    });
    expect(obj.status?.instanceId).toBe("byname-1");
    expect(obj.metadata.annotations?.["aidc.io/external-id"]).toBe("byname-1");
  });

  it("binds nothing to an ambiguous name and names the instances found", async () => {
    await create("ambiguous", { name: "twin" });
    const bound = await eventually(async () => condition(await read("ambiguous"), "Bound"));
    expect(bound).toMatchObject({ status: "False", reason: "AmbiguousName" });
    expect(bound.message).toMatch(/twin-1 .*twin-2/);
    const obj = await read("ambiguous");
    expect(obj?.status?.instanceId).toBeUndefined();
    expect(obj?.metadata.annotations?.["aidc.io/external-id"]).toBeUndefined();
    expect(condition(obj, "Ready")).toMatchObject({ status: "False", reason: "NotBound" });
  });

  it("binds an ambiguous name once aidcId narrows it to one instance", async () => {
    await create("twin-in-2", { name: "twin", aidcId: 2 });
    const obj = await eventually(async () => {
      const o = await read("twin-in-2");
      return o?.status?.instanceId ? o : undefined;
    });
    expect(obj.status?.instanceId).toBe("twin-2");
  });

  it("binds nothing to a name no instance has and says so", async () => {
    await create("missing", { name: "nobody-is-called-this" });
    const bound = await eventually(async () => condition(await read("missing"), "Bound"));
    expect(bound).toMatchObject({ status: "False", reason: "NoMatchingInstance" });
    expect(bound.message).toContain('"nobody-is-called-this"');
    // Events are written in the background (their own client): wait for it.
    await eventually(async () =>
      (await events("missing")).some((e) => e.reason === "NoMatchingInstance"),
    );
  });

  it("says, at the current generation, that an instanceId that does not exist cannot bind", async () => {
    await create("no-such", { instanceId: "cci-missing-1" });
    const obj = await eventually(async () => {
      const o = await read("no-such");
      return condition(o, "Ready")?.reason === "InstanceNotFound" ? o : undefined;
    });
    // observedGeneration tells Argo CD and kstatus the condition is about this spec.
    expect(obj.status?.observedGeneration).toBe(obj.metadata.generation);
    expect(condition(obj, "Ready")?.observedGeneration).toBe(obj.metadata.generation);
    expect(condition(obj, "Stalled")).toMatchObject({ status: "True", reason: "InstanceNotFound" });
  });

  it("shows a state change made through the admin API within one poll", async () => {
    await create("changing", { instanceId: "change-1" });
    await eventually(async () => condition(await read("changing"), "Ready")?.status === "True");
    await op.admin.setCciState("change-1", { status: "STOPPED", subStatus: "STOPPED" });
    const changedAt = Date.now();
    const obj = await eventually(
      async () => {
        const o = await read("changing");
        return o?.status?.remoteStatus === "STOPPED" ? o : undefined;
      },
      10_000,
      50,
    );
    // One poll, plus the snapshot's TTL (90% of it) at worst, plus slack for the writes
    // on a busy machine.
    expect(Date.now() - changedAt).toBeLessThan(POLL_MS + 0.9 * POLL_MS + 1_000);
    expect(condition(obj, "Ready")).toMatchObject({ status: "False", reason: "Stopped" });
  });

  it("surfaces error details in a terminal condition and warns once per distinct error", async () => {
    await create("failing", { instanceId: "err-1" });
    const obj = await eventually(async () => {
      const o = await read("failing");
      return o?.status?.error ? o : undefined;
    });
    expect(obj.status?.error).toEqual({
      description: "The system disk could not be created.",
      suggestion: "Release the instance and create it again.",
      detail: "pool ssd-01 timed out",
      instanceStatus: "FAILED",
      instanceSubStatus: "CREATE_VOLUME_FAILED",
    });
    const ready = condition(obj, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "InstanceFailed" });
    expect(ready?.message).toContain("The system disk could not be created.");
    expect(ready?.message).toContain("Release the instance and create it again.");
    // Several polls later, still one Warning for this error.
    await new Promise((r) => setTimeout(r, 3 * POLL_MS));
    const warned = async () =>
      (await events("failing")).filter(
        (e) => e.reason === "InstanceFailed" && e.type === "Warning",
      );
    expect(await warned()).toHaveLength(1);
    await op.admin.setCciState("err-1", {
      errorDetails: {
        instanceStatus: "FAILED",
        instanceSubStatus: "IMAGE_PULL_FAILED",
        errorDescription: "The image could not be pulled.",
        suggestion: "Check the image name.",
        errorDetail: "manifest unknown",
      },
    });
    await eventually(async () => ((await warned()).length === 2 ? true : undefined));
  });

  it("saves each image once and shows the saving state", async () => {
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    const images = [
      { imageName: "team/base", tag: "v1" },
      { imageName: "team/extra", tag: "v1" },
    ];
    await create("imaging", { instanceId: "img-1", images });
    const seen = new Set<string>();
    const obj = await eventually(
      async () => {
        const o = await read("imaging");
        for (const i of o?.status?.images ?? []) seen.add(`${i.imageName}:${i.state}`);
        const all = o?.status?.images ?? [];
        return all.length === 2 && all.every((i) => i.state === "Saved") ? o : undefined;
      },
      30_000,
      100,
    );
    expect(seen).toContain("team/base:Saving");
    expect(obj.status?.images?.every((i) => i.imageId?.startsWith("img"))).toBe(true);
    expect(condition(obj, "ImagesSaved")).toMatchObject({ status: "True", reason: "Saved" });
    await new Promise((r) => setTimeout(r, 3 * POLL_MS));
    const saves = await op.admin.requests({ since, endpoint: "saveCciImage" });
    expect(saves.map((s) => s.body)).toEqual(images);
    expect(saves.every((s) => s.path === "/v1/cci/instance/img-1/save-image")).toBe(true);
  });

  it("retries a refused image save with backoff and shows the failure meanwhile", async () => {
    await op.admin.setFaults([
      {
        kind: "error",
        endpoint: "saveCciImage",
        pathPrefix: "/v1/cci/instance/img-2/",
        status: 400,
        message: "image registry unavailable",
        times: 1,
      },
    ]);
    await create("imaging-retry", { instanceId: "img-2", images: [{ imageName: "r", tag: "1" }] });
    const failed = await eventually(
      async () => (await read("imaging-retry"))?.status?.images?.find((i) => i.state === "Failed"),
      10_000,
      50,
    );
    expect(failed.message).toMatch(
      /attempt 1 failed: .*image registry unavailable; next attempt at/,
    );
    const saved = await eventually(async () =>
      (await read("imaging-retry"))?.status?.images?.find((i) => i.state === "Saved"),
    );
    expect(saved.imageId).toBeTruthy();
    await eventually(async () =>
      (await events("imaging-retry")).some((e) => e.reason === "ImageSaveFailed"),
    );
  });

  it("leaves the instance untouched on deletion and says so in an event", async () => {
    await create("deleting", { instanceId: "del-1" });
    await eventually(async () => (await read("deleting"))?.status?.instanceId);
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    await op.kube.delete(cciInstanceCrd, { namespace: ns, name: "deleting" });
    await eventually(async () => (await read("deleting")) === undefined);
    const kept = await eventually(async () =>
      (await events("deleting")).find((e) => e.reason === "InstanceKept"),
    );
    expect(kept.note).toContain("CCI instance del-1 is left untouched");
    const state = await op.admin.state();
    expect(state.cci.find((c) => c.id === "del-1")).toMatchObject({ status: "RUNNING" });
    const writes = (await op.admin.requests({ since })).filter((r) => r.method !== "GET");
    expect(writes).toEqual([]);
  });
  it("turns a malformed list answer into Synced=False, keeps the last status, and recovers", async () => {
    await create("malformed", { instanceId: "cci-0002" });
    await eventually(async () => condition(await read("malformed"), "Synced")?.status === "True");
    await op.admin.setFaults([{ kind: "malformed", endpoint: "listCci" }]);
    try {
      const synced = await eventually(async () => {
        const c = condition(await read("malformed"), "Synced");
        return c?.status === "False" ? c : undefined;
      });
      expect(synced.message).toMatch(/malformed response/);
      expect((await read("malformed"))?.status?.remoteStatus).toBe("STOPPED");
    } finally {
      await op.admin.clearFaults();
    }
    await eventually(async () => condition(await read("malformed"), "Synced")?.status === "True");
  });
});
