/**
 * Helpers for integration tests of the managed kinds: create, read, patch and delete
 * objects as a user would, wait for a condition, and read the Events of an object.
 */
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { eventually } from "./kube.js";

/** events.k8s.io/v1 Events. */
export const EVENTS: ResourceDescriptor = {
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
};

/** A condition as read from an object. */
export interface ReadCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/** The condition `type` of `obj`, if any. */
export function conditionOf(obj: KubeObject | undefined, type: string): ReadCondition | undefined {
  const status = obj?.status as { conditions?: ReadCondition[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

/** Objects of one kind in one namespace, as a user handles them. */
export class ObjectsOf {
  constructor(
    private readonly kube: KubeClient,
    private readonly res: ResourceDescriptor,
    private readonly namespace: string,
  ) {}

  /** Creates `name` with `spec` (and annotations). */
  create(name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) {
    return this.kube.create<KubeObject>(this.res, {
      apiVersion: `${this.res.group}/${this.res.version}`,
      kind: this.res.kind,
      metadata: { name, namespace: this.namespace, ...(annotations ? { annotations } : {}) },
      spec,
    });
  }

  /** Reads `name` (undefined when gone). */
  get(name: string) {
    return this.kube.get<KubeObject>(this.res, { namespace: this.namespace, name });
  }

  /** Merge-patches the spec of `name`. */
  patchSpec(name: string, spec: Record<string, unknown>) {
    return this.kube.patch<KubeObject>(this.res, { namespace: this.namespace, name }, { spec });
  }

  /** Merge-patches the annotations of `name` (null removes one). */
  annotate(name: string, annotations: Record<string, string | null>) {
    return this.kube.patch<KubeObject>(
      this.res,
      { namespace: this.namespace, name },
      { metadata: { annotations } },
    );
  }

  /** Deletes `name`. */
  delete(name: string) {
    return this.kube.delete(this.res, { namespace: this.namespace, name });
  }

  /** Waits until `check(obj)` holds for `name`; returns the object. */
  waitFor(name: string, check: (obj: KubeObject) => boolean, timeoutMs = 20_000) {
    return eventually(async () => {
      const obj = await this.get(name);
      return obj && check(obj) ? obj : undefined;
    }, timeoutMs);
  }

  /** Waits until condition `type` of `name` has `status` (and `reason`, if given). */
  waitForCondition(
    name: string,
    type: string,
    status: string,
    reason?: string,
    timeoutMs?: number,
  ) {
    return this.waitFor(
      name,
      (o) => {
        const c = conditionOf(o, type);
        return c?.status === status && (reason === undefined || c.reason === reason);
      },
      timeoutMs,
    );
  }

  /** Waits until `name` no longer exists. */
  waitForGone(name: string, timeoutMs = 20_000) {
    return eventually(
      async () => ((await this.get(name)) === undefined ? true : undefined),
      timeoutMs,
    );
  }

  /**
   * Waits until Events with each of `reasons` exist about `name` (the operator writes
   * Events in the background, so they may land after the status); returns all reasons.
   */
  waitForEvents(name: string, reasons: string[], timeoutMs = 20_000): Promise<string[]> {
    return eventually(async () => {
      const seen = await this.eventReasons(name);
      return reasons.every((r) => seen.includes(r)) ? seen : undefined;
    }, timeoutMs);
  }

  /** The notes of the Events about `name` with `reason`. */
  async eventNotes(name: string, reason: string): Promise<string[]> {
    return (await this.eventsOf(name, reason)).map((e) => String(e.note));
  }

  /** How many times an Event about `name` with `reason` was recorded (series counted). */
  async eventCount(name: string, reason: string): Promise<number> {
    const events = await this.eventsOf(name, reason);
    return events.reduce((n, e) => n + ((e.series as { count?: number })?.count ?? 1), 0);
  }

  private async eventsOf(name: string, reason: string): Promise<KubeObject[]> {
    const { items } = await this.kube.list<KubeObject>(EVENTS, this.namespace);
    return items
      .filter((e) => (e.regarding as { name?: string } | undefined)?.name === name)
      .filter((e) => e.reason === reason);
  }

  /** The reasons of the Events about `name`. */
  async eventReasons(name: string): Promise<string[]> {
    const { items } = await this.kube.list<KubeObject>(EVENTS, this.namespace);
    return items
      .filter((e) => (e.regarding as { name?: string } | undefined)?.name === name)
      .map((e) => String(e.reason));
  }
}
