/**
 * The changes and writes of the Services and EndpointSlices of `spec.exposePorts` (see
 * expose.ts for what they look like), made by the exposure controller
 * (exposure-controller.ts), which reads the existing ones from its cache.
 */
import type { AddressAllowList } from "../../config/cidr.js";
import { TRAINING_JOB_REASONS, type TrainingPod } from "../../crds/trainingjob.js";
import type { KubeClient } from "../../runtime/kube.js";
import { isConflict } from "../../runtime/kube-errors.js";
import type { KubeObject } from "../../runtime/resource.js";
import {
  desiredEndpointSlice,
  desiredService,
  diffObjects,
  ENDPOINT_SLICES,
  exposedPorts,
  type ObjectChange,
  SERVICES,
} from "./expose.js";
import type { TrainingJobObject } from "./objects.js";

const R = TRAINING_JOB_REASONS.names;

/** The exposure objects of a job as they exist. */
export interface ExistingExposure {
  services: KubeObject[];
  slices: KubeObject[];
}

/** The changes to make, per kind, and the ports refused for their address. */
export interface ExposureChanges {
  services: ObjectChange[];
  slices: ObjectChange[];
  /**
   * Open ports whose external address lies outside the allowed ranges, e.g.
   * `pod-0:8888 at 10.244.1.5`: no Service or EndpointSlice is made for them.
   */
  refused: string[];
}

/** No changes and nothing refused (exposure off, or nothing to expose). */
export const NO_EXPOSURE_CHANGES: ExposureChanges = { services: [], slices: [], refused: [] };

/** Reason and message start of a job whose open ports point outside the allowed ranges. */
export const EXPOSURE_ADDRESS_REFUSED = {
  reason: R.ExposureAddressRefused,
  message:
    "the service gave open ports an external address outside trainingJob.exposure.allowedCidrs (chart value exposure.allowedCidrs), so no Service or EndpointSlice points at it",
} as const;

/** Reason and message of a job whose `spec.exposePorts` the operator is not set up for. */
export const EXPOSURE_DISABLED = {
  reason: R.ExposureDisabled,
  message:
    "spec.exposePorts is on, but exposure is disabled in the operator (config trainingJob.exposure.enabled, chart value exposure.enabled): no Service or EndpointSlice is made",
} as const;

/**
 * The open ports whose external address `addresses` does not allow, e.g. `pod-0:8888 at
 * "10.244.1.5"` (none without `spec.exposePorts`): they get no Service or EndpointSlice.
 */
export function refusedExposure(
  job: TrainingJobObject,
  pods: readonly TrainingPod[],
  addresses: AddressAllowList,
): string[] {
  const open = job.spec.exposePorts ? exposedPorts(job.metadata?.name ?? "", pods) : [];
  return open
    .filter((p) => !addresses.allows(p.externalHost))
    .map((p) => `${p.podName}:${p.port} at ${JSON.stringify(p.externalHost.slice(0, 64))}`);
}

/**
 * The changes that make the exposure match the job: with `spec.exposePorts` one
 * Service and one EndpointSlice per open custom port whose external address
 * `addresses` allows, without it none. A port with another address (a service answer
 * pointing at a pod or node IP) gets nothing and is listed in `refused`.
 */
export function exposureChanges(
  job: TrainingJobObject,
  pods: readonly TrainingPod[],
  existing: ExistingExposure,
  addresses: AddressAllowList,
): ExposureChanges {
  const open = job.spec.exposePorts ? exposedPorts(job.metadata?.name ?? "", pods) : [];
  const ports = open.filter((p) => addresses.allows(p.externalHost));
  return {
    refused: refusedExposure(job, pods, addresses),
    services: diffObjects(
      ports.map((p) => desiredService(job, p)),
      existing.services,
    ),
    slices: diffObjects(
      ports.map((p) => desiredEndpointSlice(job, p)),
      existing.slices,
    ),
  };
}

/** True when nothing needs to change. */
export function exposureInSync(c: ExposureChanges): boolean {
  return c.services.length === 0 && c.slices.length === 0;
}

/** A rejection handler that swallows the errors `expected` matches and rethrows the rest. */
function unless(expected: (err: unknown) => boolean) {
  return (err: unknown): void => {
    if (!expected(err)) throw err;
  };
}

async function applyOne(
  kube: KubeClient,
  job: TrainingJobObject,
  res: typeof SERVICES,
  change: ObjectChange,
): Promise<void> {
  const ns = job.metadata?.namespace ?? "";
  // The cache may be behind this controller's own last writes: an object it created is
  // there already (409), one it deleted gone already (delete answers false); the next
  // reconcile diffs again.
  if (change.op === "create") {
    await kube.create(res, change.object).catch(unless(isConflict));
    return;
  }
  if (change.op === "delete") {
    await kube.delete(res, { namespace: ns, name: change.name });
    return;
  }
  const name = change.object.metadata?.name ?? "";
  if (res === ENDPOINT_SLICES && change.object.addressType !== change.existing.addressType) {
    // addressType is immutable: replace the slice.
    await kube.delete(res, { namespace: ns, name });
    await kube.create(res, change.object);
    return;
  }
  const { metadata, ...body } = change.object;
  await kube.patch(
    res,
    { namespace: ns, name },
    { metadata: { labels: metadata?.labels }, ...body },
  );
}

/**
 * Applies the changes (Services before their slices on create, slices first on delete)
 * and returns a summary for the event, e.g. `created Service a; deleted Service b;
 * updated EndpointSlice c`.
 */
export async function applyExposure(
  kube: KubeClient,
  job: TrainingJobObject,
  changes: ExposureChanges,
): Promise<string> {
  const done: string[] = [];
  const ordered: [typeof SERVICES, ObjectChange][] = [
    ...changes.slices.filter((c) => c.op === "delete").map((c) => [ENDPOINT_SLICES, c] as const),
    ...changes.services.map((c) => [SERVICES, c] as const),
    ...changes.slices.filter((c) => c.op !== "delete").map((c) => [ENDPOINT_SLICES, c] as const),
  ] as [typeof SERVICES, ObjectChange][];
  const serviceNames = new Set(
    changes.services.map((c) => (c.op === "delete" ? c.name : (c.object.metadata?.name ?? ""))),
  );
  for (const [res, change] of ordered) {
    await applyOne(kube, job, res, change);
    const name = change.op === "delete" ? change.name : (change.object.metadata?.name ?? "");
    // A slice changed with its Service is said with the Service; alone, it is said too,
    // so that the Updated event names what changed (never an empty "in sync").
    if (res === SERVICES || !serviceNames.has(name)) {
      done.push(`${change.op}d ${res === SERVICES ? "Service" : "EndpointSlice"} ${name}`);
    }
  }
  return done.join("; ");
}
