/**
 * What a reconcile writes into its object, and what its status holds. Each write is
 * conditioned on the resourceVersion of the object as read (from the cache), so a decision
 * made on an old version is never written: the status as a minimal merge patch (RFC 7386),
 * skipped when nothing changed; annotations (with the finalizer, when it joins the write).
 * Finalizer updates of their own and spec patches are in lifecycle-writes.ts. A status
 * holds conditions (metav1.Condition, and kstatus's as the reason table derives them) and
 * strings within bounds: the service documents no length for its strings, so each one it
 * answers is cut where it enters a status (or a catalog object's spec), and a condition's
 * message where it is set. The sizes these bounds give each kind's status are held by
 * src/controllers/status-size.test.ts and stated in docs/custom-resources.md.
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

/** The status of a condition, as metav1.Condition spells it. */
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
/**
 * The longest message a condition keeps (metav1.Condition allows 32768): a longer one,
 * e.g. quoting an answer of the service, ends cut.
 */
export const MAX_CONDITION_MESSAGE_CHARS = 1024;

/** The mark that ends a cut string. */
export const CUT_MARK = "…";

/**
 * `value` when it has at most `max` characters (UTF-16 units), else its first
 * characters and {@link CUT_MARK} in `max` (a surrogate pair is never split).
 * Undefined stays undefined.
 */
export function capText<T extends string | undefined>(value: T, max: number): T {
  if (value === undefined || value.length <= max) return value;
  let end = max - CUT_MARK.length;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${value.slice(0, end)}${CUT_MARK}` as T;
}

/** {@link capText} at {@link REMOTE_VALUE_CHARS}. */
export function capValue<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_VALUE_CHARS);
}

/** {@link capText} at {@link REMOTE_ENV_NAME_CHARS}. */
export function capEnvName(name: string): string {
  return capText(name, REMOTE_ENV_NAME_CHARS);
}

/** {@link capText} at {@link REMOTE_ADDRESS_CHARS}. */
export function capAddress<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_ADDRESS_CHARS);
}

/** {@link capText} at {@link REMOTE_TEXT_CHARS}. */
export function capFreeText<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_TEXT_CHARS);
}

/** {@link capText} at {@link MAX_CONDITION_MESSAGE_CHARS}. */
export function conditionMessage(message: string): string {
  return capText(message, MAX_CONDITION_MESSAGE_CHARS);
}

/** What a reconciler states; the times and generation are filled in by {@link setCondition}. */
export type ConditionInput = Pick<Condition, "type" | "status" | "reason" | "message">;

/**
 * Returns a new condition list with `cond` set (the input is not changed, so cached
 * objects can be passed). An existing condition of the same type keeps its position and,
 * when its status is unchanged, its lastTransitionTime; reason, message and
 * observedGeneration are always updated (the message cut at
 * {@link MAX_CONDITION_MESSAGE_CHARS}). A new type is appended with `now` as its
 * transition time.
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

/** The condition of `type`, if present. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` exists with status True. */
export function isConditionTrue(
  conditions: readonly Condition[] | undefined,
  type: string,
): boolean {
  return getCondition(conditions, type)?.status === "True";
}

/** Returns a new list without the condition of `type`. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * What {@link withKstatusConditions} asks of a reason table (`REASONS` of
 * src/crds/index.ts, whose src/crds/reason-table.ts derives it from the reasons' states):
 * the kstatus condition, Reconciling or Stalled, that `conditions` imply, if any.
 */
export interface KstatusDerivation {
  kstatusCondition(conditions: readonly Condition[]): ConditionInput | undefined;
}

/** The kstatus condition types, present only when True. */
const KSTATUS_TYPES = ["Reconciling", "Stalled"] as const;

/**
 * Returns `conditions` with Reconciling or Stalled set as the others imply under
 * `reasons`, and the one not implied removed. Call it last, on the list that is written.
 */
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

/** What {@link patchStatus} did. */
export interface StatusPatchResult<T extends KubeObject> {
  written: boolean;
  /** The object after the write (the input object when nothing was written). */
  object: T;
  /** A Warning's words when the answer does not show the write (admission changed it). */
  notKept?: string | undefined;
}

/**
 * Makes `obj.status` equal to `status` through the status subresource with a minimal
 * merge patch (vanished fields removed); nothing is sent when the two are equal as JSON
 * (`undefined` and `null` fields count as absent), nor when admission changed the same
 * write at the same generation (status-not-kept.ts). A status computed from a stale
 * object fails with {@link ConflictError} instead of overwriting newer data.
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

/** How many times a record a dropped write removed is written back (setAnnotations). */
const WRITE_BACK_ATTEMPTS = 10;

/**
 * Sets (string) or removes (null) annotations; {@link ConflictError} when the object
 * changed since it was read. With `options.finalizer`, the same write adds that
 * finalizer when `obj` lacks it (the whole list, safe under the resourceVersion
 * condition): one request instead of two. Returns the updated object;
 * {@link WriteNotKeptError} when its answer does not show the write (admission changed
 * it), after the annotations it removed are written back.
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
  // All or nothing: what the write removed is put back, so a record it was to replace
  // (a marker replaced by the id it leads to) is not lost with its replacement; sent
  // again while an answer does not show it (admission may drop this write too).
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

/** True when the object lists `finalizer`. */
export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}
