/**
 * Helpers of the TrainingJob integration tests: objects written as a user (or, for the
 * NasVolume and TrainingTemplate statuses, as their controllers would), waits on
 * status, and the emulator's create requests of one task name.
 */

import type { z } from "zod";
import type { TrainingJobObject } from "../../src/controllers/trainingjob/objects.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type TrainingJobSpec, trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { Condition } from "../../src/runtime/object-writes.js";
import { eventually } from "./kube.js";

/** Creates a TrainingJob (the spec as a user writes it; CRD defaults apply). */
export async function createJob(
  kube: KubeClient,
  namespace: string,
  name: string,
  spec: Partial<z.input<typeof TrainingJobSpec>>,
): Promise<void> {
  await kube.create(trainingJobCrd, { metadata: { name, namespace }, spec });
}

/** Reads a TrainingJob. */
export async function getJob(
  kube: KubeClient,
  namespace: string,
  name: string,
): Promise<TrainingJobObject> {
  const job = await kube.get<TrainingJobObject>(trainingJobCrd, { namespace, name });
  if (!job) throw new Error(`TrainingJob ${namespace}/${name} not found`);
  return job;
}

/** Merge-patches a TrainingJob's spec. */
export async function patchSpec(
  kube: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await kube.patch(trainingJobCrd, { namespace, name }, { spec });
}

/** The condition of `type` of a job. */
export function conditionOf(job: TrainingJobObject, type: string): Condition | undefined {
  return job.status?.conditions?.find((c) => c.type === type);
}

/** Whether `job` runs and has settled: Synced, and nothing left under way (no Reconciling). */
export function settledRunning(job: TrainingJobObject): boolean {
  return (
    job.status?.phase === "Running" &&
    conditionOf(job, "Synced")?.status === "True" &&
    conditionOf(job, "Reconciling") === undefined
  );
}

/** Waits until `check(job)` holds; returns the job. */
export function waitForJob(
  kube: KubeClient,
  namespace: string,
  name: string,
  check: (job: TrainingJobObject) => boolean,
  timeoutMs = 30_000,
): Promise<TrainingJobObject> {
  return eventually(async () => {
    const job = await getJob(kube, namespace, name);
    return check(job) ? job : undefined;
  }, timeoutMs);
}

const READY = {
  type: "Ready",
  status: "True",
  reason: "Running",
  message: "",
  lastTransitionTime: "2025-01-01T00:00:00Z",
};

/** A NasVolume whose status says Ready with `storageId` (as its controller would write). */
export async function createReadyNasVolume(
  kube: KubeClient,
  namespace: string,
  name: string,
  storageId: string,
): Promise<void> {
  await kube.create(nasVolumeCrd, {
    metadata: { name, namespace },
    spec: { productCode: "nas.capacity.standard" },
  });
  await kube.patchStatus(
    nasVolumeCrd,
    { namespace, name },
    { storageId, storageType: "NAS", phase: "Ready", conditions: [READY] },
  );
}

/** A TrainingTemplate whose status carries `templateId` (as its controller would write). */
export async function createTemplate(
  kube: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  templateId: string,
  status: Record<string, unknown> = {},
): Promise<void> {
  await kube.create(trainingTemplateCrd, { metadata: { name, namespace }, spec });
  await kube.patchStatus(
    trainingTemplateCrd,
    { namespace, name },
    { templateId, conditions: [READY], ...status },
  );
}

/** The emulator's task-create requests for task name `name`. */
export async function createRequests(
  admin: EmulatorAdmin,
  name: string,
): Promise<RequestLogEntry[]> {
  const all = await admin.requests({ endpoint: "createTrainingTask" });
  return all.filter((e) => (e.body as { name?: string } | undefined)?.name === name);
}

/** The ids of the emulator's tasks named `name`. */
export async function taskIdsNamed(admin: EmulatorAdmin, name: string): Promise<string[]> {
  const state = await admin.state();
  return state.tasks.filter((t) => t.name === name).map((t) => String(t.id));
}
