/**
 * What a reconcile writes into its object: the status as a minimal merge patch and
 * annotations, each conditioned on the resourceVersion it was read at, so a decision made
 * on an old version is never written (finalizers and spec: lifecycle-writes.ts). A status
 * holds conditions and strings within bounds: the service documents no length for its
 * strings, so each is cut where it enters a status (src/controllers/status-size.test.ts).
 */
import { ConflictError, WriteNotKeptError } from "./errors.js";
import type { KubeClient } from "./kube.js";
import { isConflict } from "./kube-errors.js";
import {
  type Json,
  jsonEqual,
  type KubeObject,
  keyOf,
  mergePatch,
  type ResourceDescriptor,
  rfc3339,
  toJson,
  withoutNulls,
} from "./resource.js";
import { sameUnkeptWrite, statusNotKept, UNKEPT_STATUS_WRITES } from "./status-not-kept.js";

export type ConditionStatus = "True" | "False" | "Unknown";

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  /** PascalCase. */
  reason: string;
  message: string;
  /** RFC 3339; changes only when `status` changes. */
  lastTransitionTime: string;
  /** The metadata.generation the condition was computed for. */
  observedGeneration?: number;
}

/** Longest short value kept: ids, names, codes, states, times, prices, types. */
export const REMOTE_VALUE_CHARS = 256;
/** Longest env variable name kept (names only: a value never enters a status). */
export const REMOTE_ENV_NAME_CHARS = 128;
/** Longest address kept: image references, URLs, mount and export paths, endpoints. */
export const REMOTE_ADDRESS_CHARS = 1024;
/** Longest free text kept: descriptions, error details, suggestions, records, commands. */
export const REMOTE_TEXT_CHARS = 1024;
/** The longest message a condition keeps (metav1.Condition allows 32768). */
export const MAX_CONDITION_MESSAGE_CHARS = 1024;

export const CUT_MARK = "…";

/** `value` cut to `max` UTF-16 units ending in {@link CUT_MARK}; a surrogate pair stays whole. */
export function capText<T extends string | undefined>(value: T, max: number): T {
  if (value === undefined || value.length <= max) return value;
  let end = max - CUT_MARK.length;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${value.slice(0, end)}${CUT_MARK}` as T;
}

export function capValue<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_VALUE_CHARS);
}

export function capEnvName(name: string): string {
  return capText(name, REMOTE_ENV_NAME_CHARS);
}

export function capAddress<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_ADDRESS_CHARS);
}

export function capFreeText<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_TEXT_CHARS);
}

export function conditionMessage(message: string): string {
  return capText(message, MAX_CONDITION_MESSAGE_CHARS);
}

/** What a reconciler states; {@link setCondition} fills in the time and generation. */
export type ConditionInput = Pick<Condition, "type" | "status" | "reason" | "message">;

/**
 * A new list with `cond` set (a cached list is not changed): a condition of the same type
 * keeps its position and, when its status is unchanged, its lastTransitionTime.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  cond: ConditionInput,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === cond.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: cond.type,
    status: cond.status,
    reason: cond.reason,
    message: conditionMessage(cond.message),
    lastTransitionTime:
      prev && prev.status === cond.status ? prev.lastTransitionTime : rfc3339(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(
  conditions: readonly Condition[] | undefined,
  type: string,
): boolean {
  return getCondition(conditions, type)?.status === "True";
}

export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** The kstatus condition (Reconciling or Stalled) `conditions` imply (src/crds/reason-table.ts). */
export interface KstatusDerivation {
  kstatusCondition(conditions: readonly Condition[]): ConditionInput | undefined;
}

/** The kstatus condition types, present only when True. */
const KSTATUS_TYPES = ["Reconciling", "Stalled"] as const;

/** `conditions` with the kstatus condition `reasons` imply set, the other removed; call it last. */
export function withKstatusConditions(
  conditions: readonly Condition[] | undefined,
  reasons: KstatusDerivation,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const implied = reasons.kstatusCondition(conditions ?? []);
  let list = [...(conditions ?? [])];
  for (const type of KSTATUS_TYPES) {
    if (implied?.type !== type) list = removeCondition(list, type);
  }
  return implied ? setCondition(list, implied, generation, now) : list;
}

export interface StatusPatchResult<T extends KubeObject> {
  written: boolean;
  /** The object after the write (the input when nothing was written). */
  object: T;
  /** A Warning's words when the answer does not show the write (admission changed it). */
  notKept?: string | undefined;
}

/**
 * Makes `obj.status` equal to `status` with a minimal merge patch of the status
 * subresource; nothing is sent when they are equal as JSON (null counts as absent), nor
 * again at the same generation when admission changed the write (status-not-kept.ts). A
 * status computed from a stale object fails with {@link ConflictError}.
 */
export async function patchStatus<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  status: unknown,
): Promise<StatusPatchResult<T>> {
  const current = withoutNulls(toJson(obj.status)) ?? {};
  const desired = withoutNulls(toJson(status)) ?? {};
  if (jsonEqual(current, desired)) return { written: false, object: obj };
  const patch = mergePatch(current, desired) as Json;
  const uid = obj.metadata?.uid ?? "";
  const unkept = UNKEPT_STATUS_WRITES.has(uid);
  if (unkept && sameUnkeptWrite(obj, current, desired)) return { written: false, object: obj };
  try {
    const object = await kube.patch<T>(
      res,
      keyOf(obj),
      { metadata: { resourceVersion: obj.metadata?.resourceVersion }, status: patch },
      { subresource: "status" },
    );
    const shown = withoutNulls(toJson(object.status));
    if (!jsonEqual(shown ?? {}, desired)) {
      return { written: true, object, notKept: statusNotKept(obj, desired, shown) };
    }
    if (unkept) UNKEPT_STATUS_WRITES.delete(uid);
    return { written: true, object };
  } catch (err) {
    if (isConflict(err)) throw new ConflictError("status update", err);
    throw err;
  }
}

/** How many times setAnnotations writes back a record a dropped write removed. */
const WRITE_BACK_ATTEMPTS = 10;

/**
 * Sets (string) or removes (null) annotations, and adds `options.finalizer` in the same
 * write (the whole list: safe under the resourceVersion condition); {@link ConflictError}
 * when the object changed since it was read, {@link WriteNotKeptError} when the answer
 * does not show the write (after the annotations it removed are written back).
 */
export async function setAnnotations<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  annotations: Record<string, string | null>,
  options: { finalizer?: string } = {},
): Promise<T> {
  const { finalizer } = options;
  const finalizers =
    finalizer && !hasFinalizer(obj, finalizer)
      ? { finalizers: [...(obj.metadata?.finalizers ?? []), finalizer] }
      : {};
  let written: T;
  try {
    written = await kube.patch<T>(res, keyOf(obj), {
      metadata: { resourceVersion: obj.metadata?.resourceVersion, annotations, ...finalizers },
    });
  } catch (err) {
    if (isConflict(err)) throw new ConflictError("annotation update", err);
    throw err;
  }
  const now = written.metadata?.annotations ?? {};
  const unkept = Object.entries(annotations)
    .filter(([key, value]) => (value === null ? key in now : now[key] !== value))
    .map(([key]) => `annotation ${key}`);
  if (finalizer && !hasFinalizer(written, finalizer)) unkept.push(`finalizer ${finalizer}`);
  if (unkept.length === 0) return written;
  // All or nothing: a record it was to replace (a marker replaced by its id) is put back,
  // so it is not lost with its replacement; again while an answer does not show it.
  const before = obj.metadata?.annotations ?? {};
  const back = Object.fromEntries(
    Object.keys(annotations)
      .filter((key) => annotations[key] === null && key in before && !(key in now))
      .map((key) => [key, before[key]]),
  );
  let lost = Object.keys(back);
  for (let i = 0; i < WRITE_BACK_ATTEMPTS && lost.length > 0; i++) {
    const answer = await kube.patch<T>(res, keyOf(obj), {
      metadata: { resourceVersion: written.metadata?.resourceVersion, annotations: back },
    });
    const shown = answer.metadata?.annotations ?? {};
    lost = lost.filter((key) => shown[key] !== back[key]);
    written = answer;
  }
  const notBack = lost.map((key) => `annotation ${key} (removed, and written back in vain)`);
  throw new WriteNotKeptError("annotation update", [...unkept, ...notBack]);
}

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}
