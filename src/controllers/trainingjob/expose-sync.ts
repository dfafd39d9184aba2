/**
 * Reads and writes the Services and EndpointSlices of `spec.exposePorts` (see
 * expose.ts for what they look like). Reads are label-selected lists of the job's
 * namespace, so no cluster-wide Service informer is needed.
 */
import type { AddressAllowList } from "../../config/cidr.js";
import type { TrainingPod } from "../../crds/trainingjob.js";
import type { KubeClient } from "../../runtime/kube.js";
import type { KubeObject } from "../../runtime/resource.js";
import {
  desiredEndpointSlice,
  desiredService,
  diffObjects,
  ENDPOINT_SLICES,
  exposedPorts,
  JOB_LABEL,
  type ObjectChange,
  SERVICES,
} from "./expose.js";
import type { TrainingJobObject } from "./objects.js";

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

function owned(job: TrainingJobObject, objects: KubeObject[]): KubeObject[] {
  const uid = job.metadata?.uid;
  return objects.filter((o) =>
    (o.metadata?.ownerReferences ?? []).some((r) => (r as { uid?: string }).uid === uid),
  );
}

/** Lists the Services and EndpointSlices labelled with the job and owned by it. */
export async function readExposure(
  kube: KubeClient,
  job: TrainingJobObject,
): Promise<ExistingExposure> {
  const ns = job.metadata?.namespace ?? "";
  const labelSelector = `${JOB_LABEL}=${job.metadata?.name ?? ""}`;
  const [services, slices] = await Promise.all([
    kube.list(SERVICES, ns, { labelSelector }),
    kube.list(ENDPOINT_SLICES, ns, { labelSelector }),
  ]);
  return { services: owned(job, services.items), slices: owned(job, slices.items) };
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
  const refused = open
    .filter((p) => !addresses.allows(p.externalHost))
    .map((p) => `${p.podName}:${p.port} at ${JSON.stringify(p.externalHost.slice(0, 64))}`);
  return {
    refused,
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

async function applyOne(
  kube: KubeClient,
  job: TrainingJobObject,
  res: typeof SERVICES,
  change: ObjectChange,
): Promise<void> {
  const ns = job.metadata?.namespace ?? "";
  if (change.op === "create") {
    await kube.create(res, change.object);
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
