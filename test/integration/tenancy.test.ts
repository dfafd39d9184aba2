/**
 * Two tenants, one operator, one API key, against the real API server and the
 * emulator: team-b tries every way the security review found to act on team-a's
 * resources, and each is refused with a terminal condition and no change in the
 * service. A third namespace is permitted to adopt (adoption.namespaces).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllers } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import type { ResourceDescriptor } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, deleteNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const IMAGE = "registry.example.com/ml/train:1";
const JOB = { image: IMAGE, productCode: "train.cpu.16", workerCount: 1 };

let op: TestOperator;
let a = "";
let b = "";
let c = "";
const of = (kind: ResourceDescriptor, ns: string) => new ObjectsOf(op.kube, kind, ns);

beforeAll(async () => {
  const kc = adminKubeConfig();
  [a, b, c] = await Promise.all([
    createNamespace(kc, "team-a"),
    createNamespace(kc, "team-b"),
    createNamespace(kc, "team-c"),
  ]);
  op = await startTestOperator({
    controllers,
    namespaces: [a, b, c],
    config: { adoption: { namespaces: [c] } },
    service: {
      endpoints: {
        deleteTrainingTask: "DELETE /v1/training/instance/{id}",
        deleteNas: "DELETE /v1/nasStorage/instance/{id}",
        deleteTemplate: "DELETE /v1/training/template/{id}",
      },
    },
  });
}, 60_000);

// Its objects are finalized by its own operator before it stops: left behind, a later
// file's operator watching all namespaces would reconcile them beside its own.
afterAll(async () => {
  const kc = adminKubeConfig();
  if (op) await Promise.all([a, b, c].filter(Boolean).map((ns) => deleteNamespace(kc, ns)));
  await op?.stop();
}, 120_000);

/** Every request that is not a read and names `id` in its path or body. */
async function changesTo(id: string): Promise<RequestLogEntry[]> {
  return (await op.admin.requests()).filter(
    (e) => e.method !== "GET" && (e.path.includes(id) || JSON.stringify(e.body).includes(id)),
  );
}

async function readyId(kind: ResourceDescriptor, ns: string, name: string): Promise<string> {
  const o = await of(kind, ns).waitForCondition(name, "Ready", "True", undefined, 30_000);
  return o.metadata?.annotations?.[ANNOTATIONS.externalId] ?? "";
}

const refusedWith = (kind: ResourceDescriptor, ns: string, name: string, reason: string) =>
  of(kind, ns).waitForCondition(name, "Ready", "False", reason, 30_000);

describe("while team-a's objects hold their resources (one binder per resource)", () => {
  let nasId = "";
  let taskId = "";
  let templateId = "";

  beforeAll(async () => {
    await of(nasVolumeCrd, a).create("data", {
      productCode: "nas.capacity.standard",
      capacityGB: 100,
      mountPath: "/data",
    });
    await of(trainingJobCrd, a).create("train", JOB);
    await of(trainingTemplateCrd, a).create("tpl", { ...JOB, name: `tpl-${a}` });
    [nasId, taskId, templateId] = await Promise.all([
      readyId(nasVolumeCrd, a, "data"),
      readyId(trainingJobCrd, a, "train"),
      readyId(trainingTemplateCrd, a, "tpl"),
    ]);
  }, 60_000);

  it("refuses to adopt and scale team-a's NAS by spec.storageId, without a call", async () => {
    await of(nasVolumeCrd, b).create("steal", {
      productCode: "nas.capacity.standard",
      storageId: nasId,
      capacityGB: 500,
    });
    const o = await refusedWith(nasVolumeCrd, b, "steal", "AlreadyBoundRefused");
    const message = conditionOf(o, "Ready")?.message ?? "";
    expect(message).toContain("another object (in another namespace)");
    expect(message).not.toContain(a);
    expect(conditionOf(o, "Synced")?.reason).toBe("AlreadyBoundRefused");
    expect((o.status as { storageId?: string } | undefined)?.storageId).toBeUndefined();
    expect(await changesTo(nasId)).toEqual([]);
  });

  it("refuses a read-write raw storageId mount of team-a's NAS, naming the setting", async () => {
    await of(trainingJobCrd, b).create("mount", {
      ...JOB,
      taskName: `mount-${b}`,
      storage: [{ storageId: nasId, mountPath: "/steal", readOnly: false }],
    });
    const o = await refusedWith(trainingJobCrd, b, "mount", "AdoptionRefused");
    expect(conditionOf(o, "Ready")?.message).toContain("adoption.namespaces");
    const creates = await op.admin.requests({ endpoint: "createTrainingTask" });
    expect(creates.filter((e) => JSON.stringify(e.body).includes(`mount-${b}`))).toEqual([]);
  });

  it("refuses a template that mounts team-a's NAS by raw storageId (jobs made from it would)", async () => {
    await of(trainingTemplateCrd, b).create("mounting", {
      ...JOB,
      name: `mounting-${b}`,
      storage: [{ storageId: nasId, mountPath: "/steal", readOnly: false }],
    });
    await refusedWith(trainingTemplateCrd, b, "mounting", "AdoptionRefused");
    const creates = await op.admin.requests({ endpoint: "createTemplate" });
    expect(creates.filter((e) => JSON.stringify(e.body).includes(`mounting-${b}`))).toEqual([]);
  });

  it("lets team-a mount its own NAS by raw storageId", async () => {
    await of(trainingJobCrd, a).create("own-mount", {
      ...JOB,
      storage: [{ storageId: nasId, mountPath: "/data", readOnly: false }],
    });
    expect(await readyId(trainingJobCrd, a, "own-mount")).not.toBe("");
  });

  it("refuses a job bound to team-a's task by annotation, and its Delete deletes nothing", async () => {
    await op.kube.create(trainingJobCrd, {
      metadata: { name: "hijack", namespace: b, annotations: { [ANNOTATIONS.externalId]: taskId } },
      spec: { ...JOB, deletionPolicy: "Delete", description: "mine now" },
    });
    await refusedWith(trainingJobCrd, b, "hijack", "AlreadyBoundRefused");
    await of(trainingJobCrd, b).delete("hijack");
    await of(trainingJobCrd, b).waitForGone("hijack");
    expect(await changesTo(taskId)).toEqual([]);
    expect((await op.admin.state()).tasks.some((t) => t.id === taskId)).toBe(true);
  });

  it("refuses a template bound to team-a's template by annotation: its image is not replaced", async () => {
    await op.kube.create(trainingTemplateCrd, {
      metadata: {
        name: "evil",
        namespace: b,
        annotations: { [ANNOTATIONS.externalId]: templateId },
      },
      spec: { ...JOB, image: "registry.example.com/evil:1", name: `tpl-${a}` },
    });
    await refusedWith(trainingTemplateCrd, b, "evil", "AlreadyBoundRefused");
    expect(await changesTo(templateId)).toEqual([]);
  });

  it("refuses a CciInstance in a namespace that may not adopt: no URL is read, no image saved", async () => {
    await of(cciInstanceCrd, b).create("notebook", {
      name: "notebook-alice",
      images: [{ imageName: "steal/env", tag: "v1" }],
    });
    const o = await of(cciInstanceCrd, b).waitForCondition(
      "notebook",
      "Bound",
      "False",
      "AdoptionRefused",
    );
    expect(conditionOf(o, "Bound")?.message).toContain("adoption.namespaces");
    expect(o.status).not.toHaveProperty("instanceId");
    expect(o.status).not.toHaveProperty("urls");
    expect(await op.admin.requests({ endpoint: "saveCciImage" })).toEqual([]);
  });
});

describe("after team-a released its objects (the owner marks)", () => {
  let nasId = "";
  let taskId = "";

  beforeAll(async () => {
    await of(nasVolumeCrd, a).create("left", {
      productCode: "nas.capacity.standard",
      capacityGB: 100,
      mountPath: "/left",
    });
    await of(trainingJobCrd, a).create("left", JOB);
    nasId = await readyId(nasVolumeCrd, a, "left");
    taskId = await readyId(trainingJobCrd, a, "left");
    // deletionPolicy Orphan (the default): the resources stay, marked as team-a's.
    await Promise.all([of(nasVolumeCrd, a).delete("left"), of(trainingJobCrd, a).delete("left")]);
    await Promise.all([
      of(nasVolumeCrd, a).waitForGone("left"),
      of(trainingJobCrd, a).waitForGone("left"),
    ]);
  }, 60_000);

  it("refuses team-a's NAS to team-b and to a namespace permitted to adopt, without a change", async () => {
    for (const ns of [b, c]) {
      await of(nasVolumeCrd, ns).create("grab", {
        productCode: "nas.capacity.standard",
        storageId: nasId,
        capacityGB: 300,
      });
      await refusedWith(nasVolumeCrd, ns, "grab", "OwnedElsewhereRefused");
      await of(nasVolumeCrd, ns).delete("grab");
      await of(nasVolumeCrd, ns).waitForGone("grab");
    }
    expect(await changesTo(nasId)).toEqual([]);
  });

  it("refuses a Delete of team-a's task from a job bound by annotation", async () => {
    await op.kube.create(trainingJobCrd, {
      metadata: { name: "grab", namespace: b, annotations: { [ANNOTATIONS.externalId]: taskId } },
      spec: { ...JOB, deletionPolicy: "Delete" },
    });
    await refusedWith(trainingJobCrd, b, "grab", "OwnedElsewhereRefused");
    await of(trainingJobCrd, b).delete("grab");
    await of(trainingJobCrd, b).waitForGone("grab");
    expect(await changesTo(taskId)).toEqual([]);
  });

  it("lets team-a bind its own NAS again by spec.storageId (a restore, a re-adoption)", async () => {
    await of(nasVolumeCrd, a).create("again", {
      productCode: "nas.capacity.standard",
      storageId: nasId,
    });
    expect(await readyId(nasVolumeCrd, a, "again")).toBe(nasId);
  });
});

describe("a namespace permitted to adopt", () => {
  it("adopts a NAS the operator did not create, and binds a CCI instance", async () => {
    const seeded = await op.admin.seed({ nas: [{ name: `seeded-${c}` }] });
    const id = seeded.nas[0] as string;
    await of(nasVolumeCrd, c).create("adopted", {
      productCode: "nas.capacity.standard",
      storageId: id,
    });
    expect(await readyId(nasVolumeCrd, c, "adopted")).toBe(id);
    await of(cciInstanceCrd, c).create("notebook", { name: "batch-bob" });
    await of(cciInstanceCrd, c).waitForCondition("notebook", "Bound", "True");
    // A second object for the same instance is refused: one object per remote resource.
    await of(cciInstanceCrd, c).create("twin", { instanceId: "cci-0002" });
    const twin = await of(cciInstanceCrd, c).waitForCondition(
      "twin",
      "Bound",
      "False",
      "AlreadyBoundRefused",
    );
    expect(conditionOf(twin, "Bound")?.message).toContain("CciInstance notebook of this namespace");
    expect(twin.status).not.toHaveProperty("instanceId");
  });

  it("still refuses a NAS another object of the cluster holds, without a call", async () => {
    const seeded = await op.admin.seed({ nas: [{ name: `held-${c}` }] });
    const id = seeded.nas[0] as string;
    await of(nasVolumeCrd, c).create("first", {
      productCode: "nas.capacity.standard",
      storageId: id,
    });
    await readyId(nasVolumeCrd, c, "first");
    await of(nasVolumeCrd, a).create("second", {
      productCode: "nas.capacity.standard",
      storageId: id,
    });
    await refusedWith(nasVolumeCrd, a, "second", "AlreadyBoundRefused");
    await of(nasVolumeCrd, c).create("third", {
      productCode: "nas.capacity.standard",
      storageId: id,
    });
    const third = await refusedWith(nasVolumeCrd, c, "third", "AlreadyBoundRefused");
    expect(conditionOf(third, "Ready")?.message).toContain("NasVolume first of this namespace");
    expect(await changesTo(id)).toEqual([]);
  });
});
