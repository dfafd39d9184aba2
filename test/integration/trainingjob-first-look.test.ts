/**
 * A new TrainingJob is Ready after the fewest service calls: its first look reads the
 * task alone (what Ready needs), and its storages and pods follow in a routine poll
 * soon after (task-parts.ts). Both timings the spec leaves open are played by the
 * emulator: a task running, with pods, as soon as its order succeeds (the default), and
 * one that stays PENDING without pods for a while (`taskStartDelayMs`). Every version
 * of the job is seen through a watch, so the status written after the first look is
 * checked, not only the final one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import type { TrainingJobObject } from "../../src/controllers/trainingjob/objects.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import type { KubeStream } from "../../src/runtime/kube-transport.js";
import { resourcePath } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { conditionOf, createJob, waitForJob } from "../support/trainingjobs.js";

/** The poll interval: a follow-up must come well before it. */
const POLL_MS = 4_000;

// The test's raw storageId mount is allowed (the test config's adoption namespaces).
const controller: ControllerFactory = (deps) =>
  trainingJobController(deps, { subscriptionPollMs: 200 });

const JOB = { image: "registry.example.com/ml/train:1", productCode: "train.cpu.16" };

let op: TestOperator;
let ns: string;
let watch: KubeStream;
let stopped = false;
/** Every version of every job of the namespace, in order, by name. */
const versions = new Map<string, TrainingJobObject[]>();
/** When the watch delivered each version. */
const seenAt = new WeakMap<TrainingJobObject, number>();

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "tj-first-look");
  op = await startTestOperator({
    controllers: [controller],
    namespaces: [ns],
    pollIntervalMs: POLL_MS,
    emulatorOptions: { subscriptionDelayMs: 0 },
  });
  // A watch the API server ends (or refuses while its storage initializes, a 429) is
  // opened again from the last version seen: the test reads every version of each job.
  let lastVersion: string | undefined;
  const open = async (): Promise<void> => {
    watch = await op.kube.transport.watch(
      resourcePath(trainingJobCrd, ns),
      lastVersion ? { resourceVersion: lastVersion } : {},
      (_type, obj) => {
        const name = obj.metadata?.name ?? "";
        const job = obj as TrainingJobObject;
        lastVersion = obj.metadata?.resourceVersion ?? lastVersion;
        seenAt.set(job, Date.now());
        versions.set(name, [...(versions.get(name) ?? []), job]);
      },
      () => {
        if (!stopped) setTimeout(() => void reopen(), 200);
      },
    );
  };
  const reopen = async (): Promise<void> => {
    while (!stopped) {
      try {
        return await open();
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  await reopen();
}, 60_000);

afterAll(async () => {
  stopped = true;
  watch?.abort();
  await op?.stop();
});

/** The emulator's calls naming task `id`, by endpoint, in order. */
async function callsFor(id: string): Promise<string[]> {
  return (await op.admin.requests())
    .filter((r) => r.path.includes(`/${id}/`) || r.path.endsWith(`/${id}`))
    .map((r) => r.endpoint ?? r.path);
}

/** The first version of job `name` with `check`. */
function firstVersion(name: string, check: (j: TrainingJobObject) => boolean) {
  return (versions.get(name) ?? []).find(check);
}

const pods = (j: TrainingJobObject | undefined) => j?.status?.pods ?? [];
/** The condition `type` of a job version that may not have been seen. */
const cond = (j: TrainingJobObject | undefined, type: string) =>
  j ? conditionOf(j, type) : undefined;
const podsRead = (j: TrainingJobObject) =>
  j.status?.pods !== undefined && conditionOf(j, "PodsObserved") === undefined;

describe("a new TrainingJob's first look", () => {
  it("is Ready after reading the task alone, and shows its storages and pods soon after, well within one poll interval", async () => {
    const seeded = await op.admin.seed({ nas: [{ name: "first-look-data" }] });
    const storageId = seeded.nas[0] as string;
    await createJob(op.kube, ns, "at-once", {
      ...JOB,
      workerCount: 2,
      storage: [{ storageId, mountPath: "/data" }],
    });
    const done = await waitForJob(op.kube, ns, "at-once", (j) => podsRead(j) && pods(j).length > 0);
    const ready = firstVersion("at-once", (j) => conditionOf(j, "Ready")?.status === "True");
    // Ready was written from the task alone: no storages or pods yet, and it says so.
    expect(cond(ready, "Ready")).toMatchObject({ reason: "TaskRunning" });
    expect(ready?.status?.phase).toBe("Running");
    expect(ready?.status?.pods).toBeUndefined();
    expect(ready?.status?.storages).toBeUndefined();
    expect(cond(ready, "PodsObserved")).toMatchObject({
      status: "False",
      reason: "PodsNotYetRead",
    });
    // Meanwhile the object says the operator is still at work on it.
    expect(cond(ready, "Reconciling")).toMatchObject({
      status: "True",
      reason: "PodsNotYetRead",
    });
    // Then the follow-up: storages and both pods with their ports, the condition gone.
    expect(done.status?.storages).toMatchObject([{ storageId, name: "first-look-data" }]);
    expect(pods(done)).toHaveLength(2);
    expect(pods(done)[0]?.ports?.[0]).toMatchObject({ port: 22, custom: false });
    expect(conditionOf(done, "Reconciling")).toBeUndefined();
    const full = firstVersion("at-once", (j) => podsRead(j) && pods(j).length > 0);
    const followUpMs =
      (full ? (seenAt.get(full) ?? 0) : 0) - (ready ? (seenAt.get(ready) ?? 0) : 0);
    expect(followUpMs).toBeGreaterThan(0);
    expect(followUpMs).toBeLessThan(POLL_MS);
    // The calls naming the task: one detail read before Ready; after it, the follow-up
    // takes the task from the list walk (it is listed as the status shows it) and reads
    // the storages and pods alone.
    const id = done.status?.taskId as string;
    const calls = await callsFor(id);
    expect(calls[0]).toBe("getTrainingTask");
    expect(calls.slice(1).sort()).toEqual(
      [
        "listTrainingTaskStorages",
        "listPods",
        "getPodResource",
        "getPodResource",
        "listPodOpenPorts",
        "listPodOpenPorts",
      ].sort(),
    );
  }, 60_000);

  it("of a task that starts without pods for a while shows it Starting, then Running with its pods within one poll interval of the start", async () => {
    await op.admin.configure({ taskStartDelayMs: 3_000 });
    try {
      await createJob(op.kube, ns, "later", { ...JOB, workerCount: 1 });
      const starting = await waitForJob(
        op.kube,
        ns,
        "later",
        (j) => j.status?.phase === "Starting" && j.status?.pods !== undefined,
      );
      // The follow-up read the task's pods: none yet, and the status says so (no note).
      expect(pods(starting)).toEqual([]);
      expect(conditionOf(starting, "PodsObserved")).toBeUndefined();
      expect(conditionOf(starting, "Ready")).toMatchObject({
        status: "False",
        reason: "TaskStarting",
      });
      const first = firstVersion("later", (j) => j.status?.phase === "Starting");
      expect(cond(first, "PodsObserved")?.reason).toBe("PodsNotYetRead");
      const running = await waitForJob(
        op.kube,
        ns,
        "later",
        (j) => j.status?.phase === "Running" && pods(j).length === 1,
        // The start (3 s) and one poll interval, plus the reads and the write.
        3_000 + POLL_MS + 3_000,
      );
      expect(conditionOf(running, "Ready")).toMatchObject({ status: "True" });
      expect(conditionOf(running, "PodsObserved")).toBeUndefined();
    } finally {
      await op.admin.configure({ taskStartDelayMs: 0 });
    }
  }, 60_000);

  it("reads the pods at once for a job whose spec.ports needs them, and opens its ports", async () => {
    await createJob(op.kube, ns, "ports", { ...JOB, workerCount: 1, ports: [{ port: 8888 }] });
    await eventually(
      async () =>
        firstVersion("ports", (j) => conditionOf(j, "Ready")?.status === "True") ?? undefined,
      30_000,
    );
    const ready = firstVersion("ports", (j) => conditionOf(j, "Ready")?.status === "True");
    expect(pods(ready)).toHaveLength(1);
    expect(cond(ready, "PodsObserved")).toBeUndefined();
    const opened = await waitForJob(op.kube, ns, "ports", (j) =>
      pods(j).some((p) => (p.ports ?? []).some((x) => x.custom && x.port === 8888)),
    );
    expect(opened.status?.taskId).toBeTruthy();
  }, 60_000);
});
