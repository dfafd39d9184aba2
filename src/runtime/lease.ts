/**
 * The Lease that leader election (leader-election.ts) holds, how it writes one, and how
 * long this process may act on it (LeaseFence).
 */
import { type Clock, type KubeObject, type ResourceDescriptor, systemClock } from "./resource.js";

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

/**
 * Whether this process may act (call the service, write from a reconcile): false once
 * its last renewal is a renew deadline old or it released the Lease (another may hold it
 * before the elector's loop notices, e.g. after a pause); true while it never led.
 * {@link mayAct} is bound.
 */
export class LeaseFence {
  private actUntil = Number.POSITIVE_INFINITY;
  private lapsed?: () => void;

  constructor(private readonly clock: Clock = systemClock) {}

  readonly mayAct = (): boolean => {
    if (this.clock.now().getTime() < this.actUntil) return true;
    this.lapsed?.();
    return false;
  };

  /** `fn` runs whenever {@link mayAct} answers false (the elector then loses the leadership). */
  whenLapsed(fn: () => void): void {
    this.lapsed = fn;
  }

  /** The Lease was taken or renewed by a round that began at `at` (ms); not after a release. */
  renewed(at: number, renewDeadlineMs: number): void {
    if (this.actUntil !== Number.NEGATIVE_INFINITY) this.actUntil = at + renewDeadlineMs;
  }

  /** The Lease was given up (or is being): nothing acts from here on. */
  released(): void {
    this.actUntil = Number.NEGATIVE_INFINITY;
  }
}
