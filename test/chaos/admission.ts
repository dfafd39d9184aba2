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
 * The invariants (checkAdmission, with checks.ts's `held`): an object of the first two
 * is held at Synced=False WriteNotKept with no create call naming it and no remote
 * resource; the others end as every object does (Ready, exactly one remote resource).
 */
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import { seededRandom } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
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

/** What the webhook did, by what it answered. */
export interface WebhookCounts {
  requests: number;
  stripped: number;
  stamped: number;
}

/** The annotations of `obj` the write adds or changes over `old`. */
function added(obj: KubeObject | undefined, old: KubeObject | undefined): string[] {
  const now = obj?.metadata?.annotations ?? {};
  const before = old?.metadata?.annotations ?? {};
  return Object.keys(now).filter((k) => RECORDS.has(k) && now[k] !== before[k]);
}

/** The webhook's answer to `req` for an object in `mode`. */
function answer(
  req: AdmissionRequest,
  mode: WebhookMode,
  random: () => number,
  counts: WebhookCounts,
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
  if (strip.length === 0 || (mode === "strip-some" && random() < 0.5)) return { allowed: true };
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
): Promise<{ counts: WebhookCounts; stop: () => Promise<void> }> {
  const random = seededRandom(seed * 49_979_687 + 7);
  const counts: WebhookCounts = { requests: 0, stripped: 0, stamped: 0 };
  const hook = await new AdmissionWebhook().start();
  hook.handler = (req) => {
    counts.requests++;
    // Only the last requests are kept (registerWebhook looks for its probe's).
    if (hook.requests.length > 1000) hook.requests.splice(0, 500);
    const mode = (req.object ?? req.oldObject)?.metadata?.labels?.[WEBHOOK_LABEL];
    if (!MODES.includes(mode as WebhookMode)) return { allowed: true };
    return answer(req, mode as WebhookMode, random, counts);
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
  violations: string[];
}

/**
 * The create calls of `log` naming a held object must be none; `objects` are the
 * objects left, of which the held ones must show Synced=False WriteNotKept.
 */
export function checkAdmission(
  plan: Map<string, PlannedAdmission>,
  log: RequestLogEntry[],
  objects: KubeObject[],
  deleted: ReadonlySet<string>,
): AdmissionFindings {
  const held = heldOf(plan);
  const planned = Object.fromEntries(MODES.map((m) => [m, 0])) as Record<WebhookMode, number>;
  for (const p of plan.values()) planned[p.mode]++;
  const names = [...held].map((k) => k.slice(k.indexOf("/") + 1));
  const createsOfHeld = log
    .filter((e) => e.endpoint !== undefined && CREATE_ENDPOINTS.has(e.endpoint))
    .flatMap((e) => {
      const body = JSON.stringify(e.body ?? "");
      return names.filter((n) => body.includes(`"${n}"`)).map((n) => `${e.endpoint} ${n}`);
    });
  const violations = createsOfHeld.map(
    (c) => `a create call for an object held by the webhook: ${c}`,
  );
  let heldAtWriteNotKept = 0;
  for (const o of objects) {
    const key = `${o.kind}/${o.metadata?.name}`;
    if (!held.has(key) || deleted.has(key)) continue;
    const conditions = (o.status as { conditions?: { type: string; reason?: string }[] })
      ?.conditions;
    const synced = conditions?.find((c) => c.type === "Synced");
    if (synced?.reason === "WriteNotKept") heldAtWriteNotKept++;
    else violations.push(`${key} is not held at WriteNotKept (Synced ${synced?.reason})`);
  }
  return { planned, heldAtWriteNotKept, createsOfHeld, violations };
}
