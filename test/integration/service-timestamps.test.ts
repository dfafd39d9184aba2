/**
 * Times in the shapes other services may write them (`timestampFormat`: as the spec
 * shows, epoch milliseconds, ISO 8601 at +08:00), against a real API server and the
 * emulator: under each, a NasVolume's and a TrainingJob's status times are the service's
 * instants in RFC 3339 UTC, execution records stay oldest first, a description change
 * shows as a later update time, and a requested re-read changes nothing (no order, no
 * status write); a CciInstance's times read so too, and once settled its polls read no
 * detail (the listed update time is not taken for a change).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import type { RunningEmulator } from "../../src/emulator/server.js";
import type { TimestampFormat } from "../../src/emulator/time-formats.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { toRfc3339 } from "../../src/service/schemas/primitives.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator, wireData } from "../support/operator.js";

const FORMATS: [TimestampFormat, (v: unknown) => boolean][] = [
  ["asShown", (v) => typeof v === "string" && /^\d{4}-\d{2}-\d{2}[ T][\d:.]+Z?$/.test(v)],
  ["epochMillis", (v) => typeof v === "number"],
  ["offset", (v) => typeof v === "string" && v.endsWith("+08:00")],
];
const at = (ms: number | undefined) => (ms === undefined ? undefined : toRfc3339(new Date(ms)));
const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;
const REQUESTED = "aidc.io/reconcile-requested-at";

describe.each(FORMATS)("times written %s", (timestampFormat, shown) => {
  let emulator: RunningEmulator;
  let op: TestOperator;
  let nas: ObjectsOf;
  let jobs: ObjectsOf;
  let cci: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(
      adminKubeConfig(),
      `times-${timestampFormat.toLowerCase()}`,
    );
    op = await startTestOperator({
      controllers: [nasVolumeController, trainingJobController, cciInstanceController],
      namespaces: [namespace],
      emulatorOptions: { subscriptionDelayMs: 300, timestampFormat },
    });
    emulator = op.emulator;
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    cci = new ObjectsOf(op.kube, cciInstanceCrd, namespace);
  });
  afterAll(async () => {
    await op?.stop();
  });

  it("reads the service's instants into status and misreads nothing on a re-read", async () => {
    await nas.create("store", { productCode: "nas.capacity.standard", capacityGB: 100 });
    await jobs.create("train", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 1,
      description: "before",
    });
    await nas.waitForCondition("store", "Ready", "True", undefined, 30_000);
    await jobs.waitForCondition("train", "Ready", "True", undefined, 30_000);
    const [n] = [...emulator.state.nas.values()];
    const [t] = [...emulator.state.tasks.values()];
    if (!n || !t) throw new Error("no NAS or task");
    const detail = await wireData(emulator, `/v1/training/instance/${t.id}/detail`);
    expect(shown(detail.createdTime)).toBe(true);
    expect(
      shown((await wireData(emulator, `/v1/nasStorage/instance/${n.id}/detail`)).createdTime),
    ).toBe(true);

    const nasStatus = statusOf(await nas.waitFor("store", (o) => !!statusOf(o).createdTime));
    expect(nasStatus).toMatchObject({ createdTime: at(n.createdAt) });
    expect(nasStatus.lastUpdateTime).toBe(at(n.updatedAt));
    const job = await jobs.waitFor("train", (o) => statusOf(o).lastUpdateTime === at(t.updatedAt));
    const jobStatus = statusOf(job);
    expect(jobStatus.createdTime).toBe(at(t.createdAt));
    expect(jobStatus.startTime).toBe(at(t.startedAt));
    const records = [...t.execInfos].sort((a, b) => a.at - b.at).map((e) => at(e.at));
    const execInfos = (jobStatus.execInfos ?? []) as { createTime?: string }[];
    expect(execInfos.map((e) => e.createTime)).toEqual(records.slice(-execInfos.length));

    // A description change is a later update, read as one.
    await jobs.patchSpec("train", { description: "after" });
    await eventually(async () => (t.desc === "after" ? true : undefined));
    const changed = await jobs.waitFor(
      "train",
      (o) => statusOf(o).lastUpdateTime === at(t.updatedAt),
    );
    expect(String(statusOf(changed).lastUpdateTime) >= String(jobStatus.lastUpdateTime)).toBe(true);

    // A requested re-read in detail orders nothing and writes the same status.
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    const before = await Promise.all([nas.get("store"), jobs.get("train")]);
    await nas.annotate("store", { [REQUESTED]: "1" });
    await jobs.annotate("train", { [REQUESTED]: "1" });
    const handled = (o: KubeObject) => statusOf(o).lastHandledReconcileAt === "1";
    const after = await Promise.all([
      nas.waitFor("store", handled),
      jobs.waitFor("train", handled),
    ]);
    const writes = (await op.admin.requests({ since })).filter((e) => e.method !== "GET");
    expect(writes.map((e) => `${e.method} ${e.path}`)).toEqual([]);
    for (const [i, o] of after.entries()) {
      const { lastHandledReconcileAt: _, ...rest } = statusOf(o);
      const { lastHandledReconcileAt: __, ...was } = statusOf(before[i] as KubeObject);
      expect(rest).toEqual(was);
    }
  }, 90_000);

  it("reads a CCI instance's times and, settled, reads no detail: list and status agree", async () => {
    await cci.create("notebook", { instanceId: "cci-0001" });
    const bound = await cci.waitForCondition("notebook", "Ready", "True", undefined, 30_000);
    expect(statusOf(bound)).toMatchObject({
      createdTime: "2025-01-06T09:00:00Z",
      lastUpdateTime: "2025-01-06T09:05:00Z",
      startTime: "2025-01-06T09:01:30Z",
    });
    const listed = await wireData(emulator, "/v1/cci/instance/list?pageNo=1&pageSize=50");
    expect(shown((listed.records as { updateTime?: unknown }[])[0]?.updateTime)).toBe(true);
    // Each poll lists; a detail read would mean the listed updateTime reads as a change.
    await new Promise((r) => setTimeout(r, 1_000));
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await op.admin.requests({ since, endpoint: "listCci" })).not.toEqual([]);
    expect(await op.admin.requests({ since, endpoint: "getCci" })).toEqual([]);
  }, 60_000);
});
