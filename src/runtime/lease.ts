/**
 * The Lease that leader election (leader-election.ts) holds and how it writes one; how
 * long this process may act on it is the LeaseFence's (outbound-guards.ts).
 */
import type { KubeObject, ResourceDescriptor } from "./resource.js";

/** coordination.k8s.io/v1 Lease. */
export const LEASES: ResourceDescriptor = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};

/** The fields of a Lease's spec that leader election uses. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export type Lease = KubeObject & { spec?: LeaseSpec };

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(d: Date): string {
  return `${d.toISOString().slice(0, 23)}000Z`;
}

/** The Lease record as a string with sorted keys, to notice any change of it. */
export function canonical(spec: LeaseSpec): string {
  return JSON.stringify(spec, Object.keys(spec).sort());
}
