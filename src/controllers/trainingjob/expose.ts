/**
 * `spec.exposePorts`: for each open custom port of each pod, a Service without selector
 * and an EndpointSlice pointing at the port's external address, owned by the
 * TrainingJob, so in-cluster clients reach the pod by a stable name
 * (`<service>.<namespace>.svc:<port>`). Pure: desired objects and the diff against
 * what exists; expose-sync.ts applies it.
 */
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { isDeepStrictEqual } from "node:util";
import type { TrainingPod } from "../../crds/trainingjob.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { TrainingJobObject } from "./objects.js";

/** Core v1 Services. */
export const SERVICES: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "services",
  kind: "Service",
  namespaced: true,
};

/** discovery.k8s.io/v1 EndpointSlices. */
export const ENDPOINT_SLICES: ResourceDescriptor = {
  group: "discovery.k8s.io",
  version: "v1",
  plural: "endpointslices",
  kind: "EndpointSlice",
  namespaced: true,
};

/** Label on every exposed object: the TrainingJob's name. */
export const JOB_LABEL = "aidc.io/trainingjob";
/** Label linking an EndpointSlice to its Service (Kubernetes' own). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
/** Label naming the slice's manager, so the EndpointSlice controller leaves it alone. */
export const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
/** Value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY = "aidc-operator.aidc.io";

/** One port to expose. */
export interface ExposedPort {
  serviceName: string;
  podName: string;
  port: number;
  protocol: string;
  externalHost: string;
  externalPort: number;
}

/** EndpointSlice addressType by `net.isIP`'s answer (0: a hostname, FQDN). */
const ADDRESS_TYPES: Record<number, string> = { 4: "IPv4", 6: "IPv6" };

/**
 * The Service name of a pod's port: `<job>-<hash of pod name>-<port>`, a DNS-1035 label
 * of at most 63 characters (the job name is shortened and made label-safe).
 */
export function serviceNameFor(jobName: string, podName: string, port: number): string {
  const hash = createHash("sha256").update(podName).digest("hex").slice(0, 6);
  const suffix = `-${hash}-${port}`;
  let base = jobName.toLowerCase().replace(/[^a-z0-9-]/g, "-");
  if (!/^[a-z]/.test(base)) base = `tj-${base}`;
  base = base.slice(0, 63 - suffix.length).replace(/-+$/, "");
  return `${base}${suffix}`;
}

/** The ports to expose: every custom port with an external address, of every pod. */
export function exposedPorts(jobName: string, pods: readonly TrainingPod[]): ExposedPort[] {
  const out: ExposedPort[] = [];
  for (const pod of pods) {
    for (const p of pod.ports ?? []) {
      if (!p.custom || !p.externalHost || p.externalPort === undefined) continue;
      out.push({
        serviceName: serviceNameFor(jobName, pod.name, p.port),
        podName: pod.name,
        port: p.port,
        protocol: p.protocol ?? "http",
        externalHost: p.externalHost,
        externalPort: p.externalPort,
      });
    }
  }
  return out.sort((a, b) => a.serviceName.localeCompare(b.serviceName));
}

function ownerReference(job: TrainingJobObject) {
  return {
    apiVersion: job.apiVersion ?? "aidc.io/v1alpha1",
    kind: job.kind ?? "TrainingJob",
    name: job.metadata?.name ?? "",
    uid: job.metadata?.uid ?? "",
    controller: true,
  };
}

function metadata(job: TrainingJobObject, name: string, labels: Record<string, string>) {
  return {
    name,
    namespace: job.metadata?.namespace ?? "",
    labels: { [JOB_LABEL]: job.metadata?.name ?? "", ...labels },
    ownerReferences: [ownerReference(job)],
  };
}

/** The Service of an exposed port: no selector, the container port as its port. */
export function desiredService(job: TrainingJobObject, e: ExposedPort): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadata(job, e.serviceName, {}),
    spec: {
      type: "ClusterIP",
      ports: [{ name: e.protocol, port: e.port, targetPort: e.externalPort, protocol: "TCP" }],
    },
  };
}

/** The EndpointSlice of an exposed port: the external host and port. */
export function desiredEndpointSlice(job: TrainingJobObject, e: ExposedPort): KubeObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: metadata(job, e.serviceName, {
      [SERVICE_NAME_LABEL]: e.serviceName,
      [MANAGED_BY_LABEL]: MANAGED_BY,
    }),
    addressType: ADDRESS_TYPES[isIP(e.externalHost)] ?? "FQDN",
    endpoints: [{ addresses: [e.externalHost], conditions: { ready: true } }],
    ports: [{ name: e.protocol, port: e.externalPort, protocol: "TCP" }],
  };
}

/** What to do to one object so that it matches. */
export type ObjectChange =
  | { op: "create"; object: KubeObject }
  | { op: "update"; object: KubeObject; existing: KubeObject }
  | { op: "delete"; name: string };

/** The parts of a Service or EndpointSlice the operator sets, for comparing. */
function managedFields(o: KubeObject): unknown {
  const spec = (o.spec ?? {}) as { ports?: unknown[] };
  return {
    ports: (spec.ports ?? (o.ports as unknown[] | undefined) ?? []).map((p) => {
      const { name, port, targetPort, protocol } = p as Record<string, unknown>;
      return { name, port, targetPort, protocol };
    }),
    addressType: o.addressType,
    endpoints: ((o.endpoints as { addresses?: unknown }[] | undefined) ?? []).map(
      (e) => e.addresses,
    ),
  };
}

/**
 * True when `existing` matches `desired` on what the operator sets. Values are
 * compared as values, never as serialized text: the API server returns label maps
 * with their keys sorted, whatever order they were written in. Labels the operator
 * does not set (added by someone else) do not count.
 */
export function matchesDesired(desired: KubeObject, existing: KubeObject): boolean {
  const want = desired.metadata?.labels ?? {};
  const have = existing.metadata?.labels ?? {};
  if (Object.entries(want).some(([k, v]) => have[k] !== v)) return false;
  return isDeepStrictEqual(managedFields(desired), managedFields(existing));
}

/**
 * The changes that make `existing` (the objects labelled with the job) equal
 * `desired`: missing ones created, different ones updated, the rest deleted. Objects
 * are compared on the fields the operator sets (the API server adds others).
 */
export function diffObjects(
  desired: readonly KubeObject[],
  existing: readonly KubeObject[],
): ObjectChange[] {
  const have = new Map(existing.map((o) => [o.metadata?.name ?? "", o]));
  const changes: ObjectChange[] = [];
  const wanted = new Set<string>();
  for (const d of desired) {
    const name = d.metadata?.name ?? "";
    wanted.add(name);
    const e = have.get(name);
    if (!e) changes.push({ op: "create", object: d });
    else if (!matchesDesired(d, e)) {
      changes.push({ op: "update", object: d, existing: e });
    }
  }
  for (const name of [...have.keys()].sort()) {
    if (!wanted.has(name)) changes.push({ op: "delete", name });
  }
  return changes;
}
