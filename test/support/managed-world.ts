/**
 * A fake world for the managed reconciler's unit tests: one object behind an in-memory
 * API server that records every write, a fake remote resource, and the loop over both.
 */
import pino from "pino";
import type {
  ManagedObject,
  Observation,
  SubscriptionPoll,
} from "../../src/controllers/managed/call.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import type { KindClient, ManagedKind } from "../../src/controllers/managed/external-client.js";
import { managedReconciler } from "../../src/controllers/managed/reconciler.js";
import type { ReconcileContext } from "../../src/runtime/controller.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";

/** The test kind. */
export const RES: ResourceDescriptor = {
  group: "test.io",
  version: "v1",
  plural: "things",
  kind: "Thing",
  namespaced: true,
};
/** The test object's key. */
export const KEY = { namespace: "ns", name: "a" };

/** RFC 7386 merge patch. */
function merge(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/** What one patch wrote, for comparing write sequences (random tokens and times left out). */
export function writeOf(meta: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(meta).length) return { status: "set" };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((meta.annotations ?? {}) as Record<string, unknown>)) {
    out[k] = k === ANNOTATIONS.createPending && v !== null ? "set" : v;
  }
  const finalizers = meta.finalizers as string[] | undefined;
  if (finalizers) out.finalizers = finalizers.join(",");
  return out;
}

/** One object in memory behind a fake API server, cache, clock and event recorder. */
export function world(spec: Record<string, unknown>, annotations: Record<string, string> = {}) {
  let obj: KubeObject | undefined = {
    metadata: { ...KEY, generation: 1, resourceVersion: "1", annotations },
    spec,
  };
  let rv = 1;
  const calls: string[] = [];
  /** Each write's content: annotations as sent (a pending marker as "set"), finalizers, status. */
  const writes: Record<string, unknown>[] = [];
  const events: string[] = [];
  /** Each event as `<type> <reason>: <message>`. */
  const notes: string[] = [];
  const kube = {
    patch: async (_res: unknown, _key: unknown, body: { metadata?: object }) => {
      const current = obj as KubeObject;
      const { resourceVersion: _rv, ...meta } = (body.metadata ?? {}) as Record<string, unknown>;
      writes.push(writeOf(meta));
      const next = merge(current, { ...body, metadata: meta }) as KubeObject;
      rv += 1;
      next.metadata = { ...next.metadata, resourceVersion: String(rv) };
      const keys = Object.keys(meta);
      calls.push(body.metadata && keys.length ? `write ${keys.join(",")}` : "write status");
      obj =
        next.metadata?.deletionTimestamp && !next.metadata.finalizers?.length ? undefined : next;
      return next;
    },
  };
  const ctx = {
    kube,
    cache: { get: () => obj, byIndex: () => (obj ? [obj] : []) },
    clock: { now: () => new Date("2026-01-01T00:00:10Z") },
    events: {
      normal: (_o: unknown, reason: string, message: string) => {
        events.push(`Normal ${reason}`);
        notes.push(`Normal ${reason}: ${message}`);
      },
      warning: (_o: unknown, reason: string, message: string) => {
        events.push(`Warning ${reason}`);
        notes.push(`Warning ${reason}: ${message}`);
      },
    },
    log: pino({ level: "silent" }),
  } as unknown as ReconcileContext;
  return {
    ctx,
    calls,
    writes,
    events,
    notes,
    get obj() {
      return obj;
    },
    set(change: (o: KubeObject) => KubeObject) {
      obj = change(obj as KubeObject);
    },
  };
}

/** A world of {@link world}. */
export type W = ReturnType<typeof world>;

/** A fake remote resource that records its calls into the world's call list. */
export function client(w: () => W, overrides: Partial<KindClient<ManagedObject, string>> = {}) {
  // Without a delete of the test's own, the kind has no delete operation.
  const noDelete = overrides.delete
    ? {}
    : { delete: async () => "NotConfigured" as const, deleteConfigured: () => false };
  const c = {
    observe: async (): Promise<Observation<string>> => {
      w().calls.push("observe");
      return {
        exists: true,
        upToDate: true,
        ready: { status: "True", reason: "Available", message: "" },
        remote: "r",
      };
    },
    create: async (call) => {
      const pending = call.obj.metadata?.annotations?.[ANNOTATIONS.createPending];
      w().calls.push(`create (pending ${pending ? "recorded" : "MISSING"})`);
      return { subscriptionKey: "key-1" };
    },
    pollSubscription: async (): Promise<SubscriptionPoll> => {
      w().calls.push("poll");
      return { state: "Succeeded", externalId: "id-1" };
    },
    lookupByToken: async () => {
      w().calls.push("lookup");
      return [];
    },
    update: async () => ({ outcome: "Applied", message: "" }),
    ...noDelete,
    ...overrides,
  } as KindClient<ManagedObject, string>;
  return c;
}

/**
 * The managed reconciler of a test kind over `c` (poll 30 s, subscription poll 1 s,
 * window 5 s), with `extra` hooks of the kind (e.g. `resolveReferences`).
 */
export function loop<Refs = unknown>(
  c: KindClient<ManagedObject, string, Refs>,
  extra: Partial<ManagedKind<ManagedObject, string, Refs>> = {},
) {
  return managedReconciler(
    {
      resource: RES,
      finalizer: "test.io/f",
      connect: () => c,
      status: (_o, f) => ({ id: f.externalId }),
      ...extra,
    },
    { pollIntervalMs: 30_000, subscriptionPollMs: 1_000, visibilityGraceMs: 5_000 },
    () => c,
  );
}

/** The first write of a fresh create, as {@link writeOf} shows it. */
export const CREATE_PENDING_WITH_FINALIZER = {
  [ANNOTATIONS.createPending]: "set",
  [ANNOTATIONS.createFailedGeneration]: null,
  finalizers: "test.io/f",
};

/** The reason of `o`'s condition `type`. */
export const condition = (o: KubeObject | undefined, type: string) =>
  (o?.status as { conditions?: { type: string; reason: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === type,
  )?.reason;
