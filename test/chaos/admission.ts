/**
 * A mutating admission webhook under chaos (`--webhook-share`): the run serves one
 * (test/support/admission.ts) over every aidc.io kind of its namespace, and a seeded
 * share of the objects that create carries a label naming what it does to them:
 * - `strip-marker`: removes the operator's record annotations (the
 *   ANNOTATIONS of src/controllers/managed/decisions.ts) that an update adds or changes, on every write;
 * - `strip-finalizer`: removes an aidc.io/ finalizer that a write adds, on every write;
 * - `strip-some`: as `strip-marker`, on a seeded half of the writes;
 * - `stamp`: adds a label, and one counting the writes, on every write.
 *
 * The invariants (checkAdmission, with checks.ts's `held` and `waiting`): an object of the
 * first two is held at Synced=False WriteNotKept with no create call naming it and no
 * remote resource. A `strip-some` object binds after some writes or waits: it ends Ready
 * with exactly one remote resource, or at Synced=False WriteNotKept with at most one
 * (deleted: gone, or still waiting there, its resource not left behind). For every one,
 * a create call naming it follows a write of its create-pending marker that the webhook
 * let through (the last one before it), and carries no token of a marker the webhook
 * only ever stripped.
 * `stamp` objects end as every object does (Ready, exactly one remote resource).
 */
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import { seededRandom } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { isReady } from "../bench/ready-tracker.js";
import {
  type AdmissionAnswer,
  type AdmissionRequest,
  AdmissionWebhook,
  registerWebhook,
} from "../support/admission.js";
import type { ChaosObject } from "./deletes.js";
import { CREATE_ENDPOINTS } from "./user-resolution.js";

export const WEBHOOK_LABEL = "chaos.test/webhook";
const MODES = ["strip-marker", "strip-finalizer", "strip-some", "stamp"] as const;
export type WebhookMode = (typeof MODES)[number];
/** The modes whose objects must be held at WriteNotKept. */
const HOLDING: ReadonlySet<WebhookMode> = new Set(["strip-marker", "strip-finalizer"]);
const RECORDS: ReadonlySet<string> = new Set(Object.values(ANNOTATIONS));
const WRITE_NOT_KEPT = "WriteNotKept";
/** Creates that follow their object's own (a mount of a bound file system), not its marker. */
const SECOND_CREATES: ReadonlySet<string> = new Set(["createFileSystemMount", "saveCciImage"]);

/** An object under the webhook. */
export interface PlannedAdmission {
  kind: string;
  name: string;
  mode: WebhookMode;
}

/**
 * Chooses `share` of the objects that create (not observed, not CciInstances, not in
 * `skip`: the steered ones), seeded by `seed` (a stream of its own), draws each one's
 * mode among `modes` and labels it; answers the plan by `Kind/name`.
 */
export function planAdmission(
  objects: ChaosObject[],
  share: number,
  seed: number,
  skip: ReadonlySet<string>,
  modes: readonly WebhookMode[] = MODES,
): Map<string, PlannedAdmission> {
  const random = seededRandom(seed * 32_452_843 + 61);
  const plan = new Map<string, PlannedAdmission>();
  for (const { res, obj, remoteName, keepsRemote } of objects) {
    const [draw, pick] = [random(), random()];
    const key = `${res.kind}/${obj.metadata?.name}`;
    if (draw >= share || remoteName || keepsRemote || skip.has(key)) continue;
    const mode = modes[Math.floor(pick * modes.length)] ?? "stamp";
    obj.metadata = { ...obj.metadata, labels: { ...obj.metadata?.labels, [WEBHOOK_LABEL]: mode } };
    plan.set(key, { kind: res.kind, name: obj.metadata?.name ?? "", mode });
  }
  return plan;
}

/** The `Kind/name` of the planned objects that must be held at WriteNotKept. */
export function heldOf(plan: Map<string, PlannedAdmission>): Set<string> {
  return new Set([...plan].filter(([, p]) => HOLDING.has(p.mode)).map(([k]) => k));
}

/** The `Kind/name` of the planned objects that may end waiting at WriteNotKept. */
export function mayWaitOf(plan: Map<string, PlannedAdmission>): Set<string> {
  return new Set([...plan].filter(([, p]) => p.mode === "strip-some").map(([k]) => k));
}

/** What the webhook did, by what it answered. */
export interface WebhookCounts {
  requests: number;
  stripped: number;
  stamped: number;
}

/** A write of an object's create-pending marker as the webhook answered it. */
export interface MarkerWrite {
  token: string;
  /** When the webhook answered, ms since the epoch. */
  at: number;
  /** False when the webhook stripped it. */
  kept: boolean;
}

/** The annotations of `obj` the write adds or changes over `old`. */
function added(obj: KubeObject | undefined, old: KubeObject | undefined): string[] {
  const now = obj?.metadata?.annotations ?? {};
  const before = old?.metadata?.annotations ?? {};
  return Object.keys(now).filter((k) => RECORDS.has(k) && now[k] !== before[k]);
}

/** The client token a create-pending marker records ("" when it has none). */
function tokenOf(marker: string): string {
  try {
    const token = (JSON.parse(marker) as { token?: unknown }).token;
    return typeof token === "string" ? token : "";
  } catch {
    return "";
  }
}

/**
 * The webhook's answer to `req` for an object in `mode`; each marker write it strips or
 * lets through goes to `markers` by `Kind/name`.
 */
function answer(
  req: AdmissionRequest,
  mode: WebhookMode,
  random: () => number,
  counts: WebhookCounts,
  markers: Map<string, MarkerWrite[]>,
): AdmissionAnswer {
  const obj = req.object;
  const meta = obj?.metadata;
  if (mode === "stamp") {
    counts.stamped++;
    return {
      allowed: true,
      patch: [
        { op: "add", path: "/metadata/labels/chaos.test~1team", value: "storage" },
        { op: "add", path: "/metadata/labels/chaos.test~1writes", value: `${counts.stamped}` },
      ],
    };
  }
  if (req.subResource || req.operation !== "UPDATE") return { allowed: true };
  if (mode === "strip-finalizer") {
    const before = req.oldObject?.metadata?.finalizers ?? [];
    const finalizers = meta?.finalizers ?? [];
    const kept = finalizers.filter((f) => !f.startsWith("aidc.io/") || before.includes(f));
    if (kept.length === finalizers.length) return { allowed: true };
    counts.stripped++;
    return { allowed: true, patch: [{ op: "replace", path: "/metadata/finalizers", value: kept }] };
  }
  const strip = added(obj, req.oldObject);
  const kept = strip.length === 0 || (mode === "strip-some" && random() < 0.5);
  const marker = meta?.annotations?.[ANNOTATIONS.createPending];
  if (marker !== undefined && strip.includes(ANNOTATIONS.createPending)) {
    const key = `${obj?.kind}/${meta?.name}`;
    markers.set(key, [
      ...(markers.get(key) ?? []),
      { token: tokenOf(marker), at: Date.now(), kept },
    ]);
  }
  if (kept) return { allowed: true };
  counts.stripped++;
  return {
    allowed: true,
    patch: strip.map((k) => ({
      op: "remove",
      path: `/metadata/annotations/${k.replace("/", "~1")}`,
    })),
  };
}

/**
 * Serves the webhook and registers it (failurePolicy Fail) for the aidc.io kinds of
 * `namespace` and their status; answers its counts and its removal.
 */
export async function startChaosWebhook(
  kube: KubeClient,
  namespace: string,
  seed: number,
  probe: { res: ChaosObject["res"]; spec: Record<string, unknown> },
  plurals: string[],
): Promise<{
  counts: WebhookCounts;
  markers: Map<string, MarkerWrite[]>;
  stop: () => Promise<void>;
}> {
  const random = seededRandom(seed * 49_979_687 + 7);
  const counts: WebhookCounts = { requests: 0, stripped: 0, stamped: 0 };
  const markers = new Map<string, MarkerWrite[]>();
  const hook = await new AdmissionWebhook().start();
  hook.handler = (req) => {
    counts.requests++;
    // Only the last requests are kept (registerWebhook looks for its probe's).
    if (hook.requests.length > 1000) hook.requests.splice(0, 500);
    const mode = (req.object ?? req.oldObject)?.metadata?.labels?.[WEBHOOK_LABEL];
    if (!MODES.includes(mode as WebhookMode)) return { allowed: true };
    return answer(req, mode as WebhookMode, random, counts, markers);
  };
  const resources = plurals.flatMap((p) => [p, `${p}/status`]);
  const remove = await registerWebhook(
    kube,
    "mutating",
    hook,
    { name: "chaos.admission.test", namespace, resources },
    probe,
  );
  return {
    counts,
    markers,
    stop: async () => {
      await remove().catch(() => undefined);
      await hook.stop();
    },
  };
}

/** What the admission checks found. */
export interface AdmissionFindings {
  planned: Record<WebhookMode, number>;
  /** Held objects (not deleted) at Synced=False WriteNotKept at the end. */
  heldAtWriteNotKept: number;
  /** Create calls that carried the name of a held object. */
  createsOfHeld: string[];
  /** `strip-some` objects left at the end: Ready (bound), or waiting at WriteNotKept. */
  stripSome: { ready: number; waiting: string[] };
  /** Marker writes of `strip-some` objects the webhook let through and stripped. */
  markerWrites: { kept: number; stripped: number };
  violations: string[];
}

/** The reason of the object's Synced condition. */
export function syncedReason(x: KubeObject): string | undefined {
  const conditions = (x.status as { conditions?: { type: string; reason?: string }[] })?.conditions;
  return conditions?.find((c) => c.type === "Synced")?.reason;
}

/**
 * The objects of `plan` that may end waiting at WriteNotKept and do, among `objects`:
 * not Ready, or deleted (`deleted`) and still there.
 */
export function waitingOf(
  plan: Map<string, PlannedAdmission>,
  objects: KubeObject[],
  deleted: ReadonlySet<string>,
): Set<string> {
  const mayWait = mayWaitOf(plan);
  return new Set(
    objects
      .map((o) => ({ key: `${o.kind}/${o.metadata?.name}`, o }))
      .filter(({ key, o }) => mayWait.has(key) && syncedReason(o) === WRITE_NOT_KEPT)
      .filter(({ key, o }) => deleted.has(key) || !isReady(o))
      .map(({ key }) => key),
  );
}

/**
 * The create calls of `log` naming a held object must be none, and each naming a
 * `strip-marker` or `strip-some` object must follow a write of its marker the webhook
 * let through (its last one, `markers`) and carry no token of a marker it only stripped; `objects` are
 * the objects left, of which the held ones must show Synced=False WriteNotKept and the
 * `strip-some` ones that are not Ready too.
 */
export function checkAdmission(
  plan: Map<string, PlannedAdmission>,
  log: RequestLogEntry[],
  objects: KubeObject[],
  deleted: ReadonlySet<string>,
  markers: ReadonlyMap<string, MarkerWrite[]>,
): AdmissionFindings {
  const held = heldOf(plan);
  const planned = Object.fromEntries(MODES.map((m) => [m, 0])) as Record<WebhookMode, number>;
  for (const p of plan.values()) planned[p.mode]++;
  const creates = log
    .filter((e) => e.endpoint !== undefined && CREATE_ENDPOINTS.has(e.endpoint))
    .map((e) => ({ e, body: JSON.stringify(e.body ?? ""), at: Date.parse(e.time) }));
  const naming = (name: string) => creates.filter((c) => c.body.includes(`"${name}"`));
  const createsOfHeld = [...held].flatMap((k) => {
    const name = k.slice(k.indexOf("/") + 1);
    return naming(name).map((c) => `${c.e.endpoint} ${name}`);
  });
  const violations = createsOfHeld.map(
    (c) => `a create call for an object held by the webhook: ${c}`,
  );
  const markerWrites = { kept: 0, stripped: 0 };
  for (const [key, p] of plan) {
    if (p.mode !== "strip-marker" && p.mode !== "strip-some") continue;
    const writes = markers.get(key) ?? [];
    if (p.mode === "strip-some") {
      markerWrites.kept += writes.filter((w) => w.kept).length;
      markerWrites.stripped += writes.filter((w) => !w.kept).length;
    }
    const keptTokens = new Set(writes.filter((w) => w.kept).map((w) => w.token));
    const neverKept = writes.filter((w) => !w.kept && w.token && !keptTokens.has(w.token));
    for (const { e, body, at } of naming(p.name)) {
      // The marker written last before the create is its own (one leader at a time).
      const last = writes.filter((w) => w.at <= at).at(-1);
      if (!SECOND_CREATES.has(e.endpoint ?? "") && !last?.kept) {
        violations.push(
          `${key}: ${e.endpoint} at ${e.time} after ${last ? "a stripped write of its marker" : "no write of its marker"}`,
        );
      }
      const unkept = neverKept.find((w) => body.includes(w.token));
      if (unkept) {
        violations.push(
          `${key}: ${e.endpoint} carries the token of a marker never kept (${unkept.token})`,
        );
      }
    }
  }
  let heldAtWriteNotKept = 0;
  const stripSome = { ready: 0, waiting: [] as string[] };
  for (const o of objects) {
    const key = `${o.kind}/${o.metadata?.name}`;
    const mode = plan.get(key)?.mode;
    const reason = syncedReason(o);
    if (mode === "strip-some") {
      if (!deleted.has(key) && isReady(o)) stripSome.ready++;
      else if (reason === WRITE_NOT_KEPT) stripSome.waiting.push(key);
      else if (!deleted.has(key))
        violations.push(
          `${key} (strip-some) is neither Ready nor waiting at WriteNotKept (Synced ${reason})`,
        );
      continue;
    }
    if (!held.has(key) || deleted.has(key)) continue;
    if (reason === WRITE_NOT_KEPT) heldAtWriteNotKept++;
    else violations.push(`${key} is not held at WriteNotKept (Synced ${reason})`);
  }
  return { planned, heldAtWriteNotKept, createsOfHeld, stripSome, markerWrites, violations };
}
