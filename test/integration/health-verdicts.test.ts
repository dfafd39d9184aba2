/**
 * What GitOps tools make of the operator's objects: every kind is brought, by the
 * real operator against the emulator, into its ready, progressing, terminal and
 * deleting states (and a TrainingJob into finished and stopped), captured as the API
 * server returns it, and judged in one table by kstatus itself (fluxcd/cli-utils, as
 * Flux and kpt run it; tools/kstatus) and by the generated Argo CD health scripts
 * (Lua 5.1, as Argo CD runs them).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ARGOCD_CM_PATCH, healthKey } from "../../scripts/generate-argocd.js";
import { root } from "../../scripts/generated-files.js";
import { controllers } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import {
  allCrds,
  bucketCrd,
  cciInstanceCrd,
  fileSystemCrd,
  GROUP,
  nasVolumeCrd,
  trainingJobCrd,
  trainingTemplateCrd,
} from "../../src/crds/index.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { kstatusOf } from "../support/kstatus.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { runHealthScript } from "../support/lua.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { kindsJudgedInTheirOwnTests } from "../support/verdicts.js";

/** A finalizer of the test's own, to hold a deleted object in its deleting state. */
const HOLD = "test.aidc.io/hold";
const IMAGE = "registry.example.com/ml/train:1";
const JOB = { image: IMAGE, productCode: "train.cpu.16", workerCount: 1 };
const TEMPLATE = { image: IMAGE, productCode: "train.cpu.16" };

interface Row {
  kind: string;
  state: string;
  kstatus: string;
  argocd: string;
}

/** The table: what each state must read as. */
const TABLE: Row[] = [
  { kind: "TrainingJob", state: "ready", kstatus: "Current", argocd: "Healthy" },
  { kind: "TrainingJob", state: "progressing", kstatus: "InProgress", argocd: "Progressing" },
  { kind: "TrainingJob", state: "terminal", kstatus: "Failed", argocd: "Degraded" },
  { kind: "TrainingJob", state: "failed task", kstatus: "Failed", argocd: "Degraded" },
  { kind: "TrainingJob", state: "finished", kstatus: "Current", argocd: "Healthy" },
  { kind: "TrainingJob", state: "stopped", kstatus: "InProgress", argocd: "Suspended" },
  { kind: "TrainingJob", state: "refused key", kstatus: "Failed", argocd: "Degraded" },
  { kind: "TrainingJob", state: "deleting", kstatus: "Terminating", argocd: "Progressing" },
  { kind: "NasVolume", state: "ready", kstatus: "Current", argocd: "Healthy" },
  { kind: "NasVolume", state: "progressing", kstatus: "InProgress", argocd: "Progressing" },
  { kind: "NasVolume", state: "terminal", kstatus: "Failed", argocd: "Degraded" },
  { kind: "NasVolume", state: "deleting", kstatus: "Terminating", argocd: "Progressing" },
  { kind: "CciInstance", state: "ready", kstatus: "Current", argocd: "Healthy" },
  { kind: "CciInstance", state: "progressing", kstatus: "InProgress", argocd: "Progressing" },
  { kind: "CciInstance", state: "terminal", kstatus: "Failed", argocd: "Degraded" },
  { kind: "CciInstance", state: "refused key", kstatus: "Failed", argocd: "Degraded" },
  { kind: "CciInstance", state: "deleting", kstatus: "Terminating", argocd: "Progressing" },
  { kind: "TrainingTemplate", state: "ready", kstatus: "Current", argocd: "Healthy" },
  { kind: "TrainingTemplate", state: "progressing", kstatus: "InProgress", argocd: "Progressing" },
  { kind: "TrainingTemplate", state: "terminal", kstatus: "Failed", argocd: "Degraded" },
  { kind: "TrainingTemplate", state: "deleting", kstatus: "Terminating", argocd: "Progressing" },
  { kind: "Bucket", state: "ready", kstatus: "Current", argocd: "Healthy" },
  { kind: "Bucket", state: "terminal", kstatus: "Failed", argocd: "Degraded" },
  { kind: "Bucket", state: "not empty", kstatus: "Terminating", argocd: "Progressing" },
  { kind: "Bucket", state: "deleting", kstatus: "Terminating", argocd: "Progressing" },
  { kind: "FileSystem", state: "ready", kstatus: "Current", argocd: "Healthy" },
  { kind: "FileSystem", state: "progressing", kstatus: "InProgress", argocd: "Progressing" },
  { kind: "FileSystem", state: "terminal", kstatus: "Failed", argocd: "Degraded" },
  { kind: "FileSystem", state: "deleting", kstatus: "Terminating", argocd: "Progressing" },
];

let op: TestOperator;
let s3: TestS3;
let ns: string;
/** The captured objects, by `kind/state`. */
const captured = new Map<string, KubeObject>();
const held: [ResourceDescriptor, string][] = [];

const of = (res: ResourceDescriptor) => new ObjectsOf(op.kube, res, ns);
const cond = (type: string, status: string, reason?: string) => (o: KubeObject) => {
  const c = conditionOf(o, type);
  return c?.status === status && (reason === undefined || c.reason === reason);
};
const upToDate = (o: KubeObject) =>
  (o.status as { observedGeneration?: number } | undefined)?.observedGeneration ===
  o.metadata?.generation;

/** Resolves the object's pending subscription in the emulator (it never resolves alone). */
async function resolveSubscription(res: ResourceDescriptor, name: string): Promise<void> {
  const obj = await of(res).waitFor(
    name,
    (o) => o.metadata?.annotations?.[ANNOTATIONS.subscriptionKey] !== undefined,
  );
  const key = obj.metadata?.annotations?.[ANNOTATIONS.subscriptionKey] as string;
  await op.admin.resolveSubscription(key, "Succeeded");
}

/**
 * Waits for `check` on `name`, settled (status of this generation, unless `anyGeneration`:
 * a failed reconcile writes only its conditions), and captures it.
 */
async function capture(
  res: ResourceDescriptor,
  state: string,
  name: string,
  check: (o: KubeObject) => boolean,
  anyGeneration = false,
): Promise<void> {
  const obj = await of(res).waitFor(
    name,
    (o) => (anyGeneration || upToDate(o)) && check(o),
    45_000,
  );
  captured.set(`${res.kind}/${state}`, obj);
}

/** Holds `name` with the test's finalizer, deletes it, and captures it deleting. */
async function captureDeleting(res: ResourceDescriptor, name: string): Promise<void> {
  await op.kube.patch(
    res,
    { namespace: ns, name },
    {
      metadata: { finalizers: [...((await of(res).get(name))?.metadata?.finalizers ?? []), HOLD] },
    },
  );
  held.push([res, name]);
  await of(res).delete(name);
  const obj = await of(res).waitFor(
    name,
    (o) =>
      o.metadata?.deletionTimestamp !== undefined &&
      (o.metadata?.finalizers ?? []).every((f) => f === HOLD),
  );
  captured.set(`${res.kind}/deleting`, obj);
}

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "verdicts");
  s3 = await startTestS3();
  op = await startTestOperator({
    controllers,
    namespaces: [ns],
    config: { objectStorage: s3.config },
    // Subscriptions resolve only when the test says so: "creating" stays put.
    emulatorOptions: { subscriptionDelayMs: 600_000 },
  });
  const tj = of(trainingJobCrd);
  const nas = of(nasVolumeCrd);
  const cci = of(cciInstanceCrd);
  const tt = of(trainingTemplateCrd);
  const bkt = of(bucketCrd);
  const fs = of(fileSystemCrd);

  await Promise.all([
    ...["tj-ready", "tj-failed", "tj-done", "tj-stopped"].map((n) => tj.create(n, JOB)),
    tj.create("tj-waiting", { ...JOB, storage: [{ nasVolumeRef: { name: "absent" } }] }),
    tj.create("tj-refused", { ...JOB, productCode: "train.no.such.product" }),
    nas.create("nas-ready", { productCode: "nas.capacity.standard" }),
    nas.create("nas-creating", { productCode: "nas.capacity.standard" }),
    nas.create("nas-refused", { productCode: "nas.no.such.product" }),
    cci.create("cci-ready", { instanceId: "cci-0001" }),
    cci.create("cci-unbound", { name: "nobody-has-this-name" }),
    cci.create("cci-error", { instanceId: "cci-0003" }),
    tt.create("tt-ready", { ...TEMPLATE, name: "shared-name" }),
    tt.create("tt-waiting", { ...TEMPLATE, storage: [{ nasVolumeRef: { name: "absent" } }] }),
    bkt.create("bkt-ready", { name: `ready-${ns}` }),
    bkt.create("bkt-full", { name: `full-${ns}`, deletionPolicy: "Delete" }),
    // Two characters: a Kubernetes name, but not a bucket name (S3: 3 to 63).
    bkt.create("b1", {}),
    fs.create("fs-ready", { sizeGB: 10 }),
    fs.create("fs-waiting", {
      sizeGB: 10,
      mounts: [{ name: "a", target: { cciInstanceRef: { name: "absent" } } }],
    }),
    // Two entries naming one instance (a reference and its instance id): refused.
    fs.create("fs-collide", {
      sizeGB: 10,
      mounts: [
        { name: "a", target: { cciInstanceRef: { name: "cci-ready" } } },
        { name: "b", target: { instanceId: "cci-0001" } },
      ],
    }),
  ]);
  for (const n of ["tj-ready", "tj-failed", "tj-done", "tj-stopped"]) {
    await resolveSubscription(trainingJobCrd, n);
  }
  await resolveSubscription(nasVolumeCrd, "nas-ready");
  const running = cond("Ready", "True", "TaskRunning");
  const taskIds = new Map<string, string>();
  for (const n of ["tj-failed", "tj-done", "tj-stopped"]) {
    const job = await tj.waitFor(n, running, 45_000);
    taskIds.set(n, (job.status as { taskId: string }).taskId);
  }
  await op.admin.setTaskState(taskIds.get("tj-failed") as string, { status: "FAILED" });
  await op.admin.setTaskState(taskIds.get("tj-done") as string, { status: "SUCCEEDED" });
  await op.admin.setTaskState(taskIds.get("tj-stopped") as string, { status: "STOPPED" });
  // Ready and settled: its storages and pods read after the first look (until then
  // PodsObserved=False PodsNotYetRead keeps it Reconciling, i.e. InProgress).
  await capture(
    trainingJobCrd,
    "ready",
    "tj-ready",
    (o) => running(o) && !cond("Reconciling", "True")(o),
  );
  await capture(trainingJobCrd, "progressing", "tj-waiting", cond("Reconciling", "True"));
  await capture(trainingJobCrd, "terminal", "tj-refused", cond("Stalled", "True"));
  await capture(trainingJobCrd, "failed task", "tj-failed", cond("Ready", "False", "TaskFailed"));
  await capture(trainingJobCrd, "finished", "tj-done", cond("Succeeded", "True"));
  await capture(trainingJobCrd, "stopped", "tj-stopped", cond("Ready", "False", "TaskStopped"));
  await capture(nasVolumeCrd, "ready", "nas-ready", cond("Ready", "True"));
  await capture(nasVolumeCrd, "progressing", "nas-creating", cond("Ready", "False", "Creating"));
  await capture(nasVolumeCrd, "terminal", "nas-refused", cond("Stalled", "True"));
  await capture(cciInstanceCrd, "ready", "cci-ready", cond("Ready", "True"));
  await capture(cciInstanceCrd, "progressing", "cci-unbound", cond("Reconciling", "True"));
  await capture(cciInstanceCrd, "terminal", "cci-error", cond("Stalled", "True"));
  await capture(trainingTemplateCrd, "ready", "tt-ready", cond("Ready", "True"));
  await capture(trainingTemplateCrd, "progressing", "tt-waiting", cond("Reconciling", "True"));
  // A second template of the same name is refused by the operator's preflight.
  await tt.create("tt-taken", { ...TEMPLATE, name: "shared-name" });
  await capture(trainingTemplateCrd, "terminal", "tt-taken", cond("Stalled", "True"));
  await capture(fileSystemCrd, "ready", "fs-ready", cond("Ready", "True"));
  await capture(fileSystemCrd, "progressing", "fs-waiting", cond("Reconciling", "True"));
  await capture(fileSystemCrd, "terminal", "fs-collide", cond("Stalled", "True"));
  await captureDeleting(trainingJobCrd, "tj-ready");
  await captureDeleting(nasVolumeCrd, "nas-ready");
  await captureDeleting(cciInstanceCrd, "cci-ready");
  await captureDeleting(trainingTemplateCrd, "tt-ready");
  await capture(bucketCrd, "ready", "bkt-ready", cond("Ready", "True"));
  await capture(bucketCrd, "terminal", "b1", cond("Stalled", "True"));
  await captureDeleting(bucketCrd, "bkt-ready");
  // A bucket that holds an object under deletionPolicy Delete waits for a person.
  await of(bucketCrd).waitFor("bkt-full", cond("Ready", "True"), 45_000);
  await putObject(`full-${ns}`);
  await bkt.delete("bkt-full");
  captured.set(
    "Bucket/not empty",
    await bkt.waitFor("bkt-full", cond("Ready", "False", "BucketNotEmpty"), 45_000),
  );
  await captureDeleting(fileSystemCrd, "fs-ready");
  // Last, since it holds every object: the service refuses the API key (403).
  await op.admin.setFaults([{ kind: "error", status: 403, message: "Forbidden" }]);
  await Promise.all([tj.create("tj-403", JOB), cci.create("cci-403", { instanceId: "cci-0002" })]);
  await capture(trainingJobCrd, "refused key", "tj-403", cond("Stalled", "True"), true);
  await capture(cciInstanceCrd, "refused key", "cci-403", cond("Stalled", "True"), true);
  await op.admin.clearFaults();
}, 240_000);

afterAll(async () => {
  for (const [res, name] of held) {
    await op?.kube
      .patch(res, { namespace: ns, name }, { metadata: { finalizers: null } })
      .catch(() => undefined);
  }
  await of(bucketCrd)
    .get("bkt-full")
    .then(
      (o) =>
        o &&
        op.kube.patch(
          bucketCrd,
          { namespace: ns, name: "bkt-full" },
          { metadata: { finalizers: null } },
        ),
    )
    .catch(() => undefined);
  await op?.stop();
  await s3?.stop();
});

/** Puts one object into `bucket`, as a user would. */
async function putObject(bucket: string): Promise<void> {
  const client = new S3Client({
    endpoint: s3.server.url,
    region: s3.server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.server.accessKeyId, secretAccessKey: s3.server.secretAccessKey },
  });
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: "k", Body: "x" }));
  client.destroy();
}

describe("the verdicts of kstatus and of the Argo CD health scripts", () => {
  const patch = parse(readFileSync(join(root, ARGOCD_CM_PATCH), "utf8")) as {
    data: Record<string, string>;
  };

  it("cover every namespaced kind (here, or in the kind's own test with verdictsOf)", () => {
    const own = kindsJudgedInTheirOwnTests();
    const kinds = allCrds
      .filter((d) => d.namespaced && !own.has(d.kind.toLowerCase()))
      .map((d) => d.kind);
    expect(new Set(TABLE.map((r) => r.kind))).toEqual(new Set(kinds));
  });

  it("read every captured state as the table says", async () => {
    const rows = TABLE.map((r) => {
      const obj = captured.get(`${r.kind}/${r.state}`);
      if (!obj) throw new Error(`${r.kind}/${r.state} was not captured`);
      return { row: r, obj };
    });
    const kstatus = kstatusOf(rows.map((r) => r.obj));
    const got = rows.map(({ row, obj }, i) => ({
      kind: row.kind,
      state: row.state,
      kstatus: kstatus[i]?.status,
      argocd: runHealthScript(patch.data[healthKey(GROUP, row.kind)] ?? "", obj).status,
    }));
    expect(got).toEqual(TABLE);
  });
});

// The objects are real: make sure the capture is what the table names.
describe("the captured objects", () => {
  it("are the operator's own writes of each state", () => {
    expect(captured.size).toBe(TABLE.length);
    const reasons = (key: string, type: string) => conditionOf(captured.get(key), type)?.reason;
    expect(reasons("TrainingJob/terminal", "Stalled")).toBe("UnknownProductRefused");
    expect(reasons("TrainingJob/progressing", "Reconciling")).toBe("NasVolumeNotFound");
    expect(reasons("TrainingJob/finished", "Ready")).toBe("TaskSucceeded");
    expect(reasons("NasVolume/terminal", "Stalled")).toBe("ProductNotFoundRefused");
    expect(reasons("CciInstance/terminal", "Stalled")).toBe("InstanceFailed");
    expect(reasons("TrainingTemplate/terminal", "Stalled")).toBe("NameTakenRefused");
    expect(reasons("FileSystem/progressing", "Reconciling")).toBe("MountTargetNotFound");
    expect(reasons("FileSystem/terminal", "Stalled")).toBe("MountTargetsCollide");
    // A 403 is terminal for every kind, CciInstance included.
    expect(reasons("TrainingJob/refused key", "Stalled")).toBe("ApiKeyRefused");
    expect(reasons("CciInstance/refused key", "Stalled")).toBe("ApiKeyRefused");
  });
});
