/**
 * Steering under chaos (`--steer-share`): a seeded share of the run's objects is paused
 * (`aidc.io/paused: "true"`), half in the manifest they are created with, half by a patch
 * with the next batch (their creates under way or done), and every one is resumed after
 * the last kill with a new `aidc.io/reconcile-requested-at` (docs/custom-resources.md,
 * "Steering an object").
 *
 * The invariants (checkSteering): no create call carries the name of an object paused
 * from its creation before it was resumed, and every steered object left echoes the
 * request in status.lastHandledReconcileAt.
 */
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import { seededRandom } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import type { ChaosObject } from "./deletes.js";
import { CREATE_ENDPOINTS } from "./user-resolution.js";

const PAUSED = "aidc.io/paused";
const RECONCILE_REQUESTED_AT = "aidc.io/reconcile-requested-at";

/** An object the run pauses, and when. */
export interface PlannedSteer {
  kind: string;
  name: string;
  /** Paused in the manifest it is created with (else by a patch after its creation). */
  fromCreation: boolean;
}

/** What the steering checks found. */
export interface SteeringFindings {
  paused: number;
  fromCreation: number;
  /** Create calls carrying the name of an object paused from its creation, sent before its resume. */
  createdWhilePaused: string[];
  /** Steered objects left whose status does not echo the reconcile request. */
  notEchoed: string[];
  violations: string[];
}

/**
 * Chooses `share` of `objects` (seeded by `seed`, a stream of its own) and pauses half of
 * them (by a draw) in their manifests; answers the plan by object index.
 */
export function planSteering(
  objects: ChaosObject[],
  share: number,
  seed: number,
): Map<number, PlannedSteer> {
  const random = seededRandom(seed * 15_485_863 + 43);
  const plan = new Map<number, PlannedSteer>();
  objects.forEach(({ res, obj }, i) => {
    const draw = random();
    const fromCreation = random() < 0.5;
    if (draw >= share) return;
    if (fromCreation) {
      obj.metadata = {
        ...obj.metadata,
        annotations: { ...obj.metadata?.annotations, [PAUSED]: "true" },
      };
    }
    plan.set(i, { kind: res.kind, name: obj.metadata?.name ?? "", fromCreation });
  });
  return plan;
}

/**
 * Patches the steering annotations of the planned objects among `objects[from, to)` that
 * `which` picks (a missing one is fine), one after another; answers when each patch was
 * sent, by `kind/name`.
 */
async function annotatePlanned(
  kube: KubeClient,
  objects: ChaosObject[],
  plan: Map<number, PlannedSteer>,
  [from, to]: [number, number],
  which: (s: PlannedSteer) => boolean,
  annotations: Record<string, string | null>,
): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  for (let i = from; i < Math.min(to, objects.length); i++) {
    const o = objects[i];
    const steer = plan.get(i);
    if (!o || !steer || !which(steer)) continue;
    sentAt.set(`${steer.kind}/${steer.name}`, Date.now());
    await kube
      .patch(
        o.res,
        { namespace: o.obj.metadata?.namespace ?? "", name: steer.name },
        { metadata: { annotations } },
      )
      .catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      });
  }
  return sentAt;
}

/** Pauses the planned objects among `objects[from, to)` not paused from their creation. */
export async function pausePlanned(
  kube: KubeClient,
  objects: ChaosObject[],
  plan: Map<number, PlannedSteer>,
  from: number,
  to: number,
): Promise<void> {
  await annotatePlanned(kube, objects, plan, [from, to], (s) => !s.fromCreation, {
    [PAUSED]: "true",
  });
}

/**
 * Resumes every planned object, asking for a reconcile now with `requestedAt`; answers
 * when each one's resume was sent, by `kind/name` (the objects are resumed one by one).
 */
export function resumePlanned(
  kube: KubeClient,
  objects: ChaosObject[],
  plan: Map<number, PlannedSteer>,
  requestedAt: string,
): Promise<Map<string, number>> {
  return annotatePlanned(kube, objects, plan, [0, objects.length], () => true, {
    [PAUSED]: null,
    [RECONCILE_REQUESTED_AT]: requestedAt,
  });
}

/** Whether `obj`, when steered, echoes `requestedAt` (the settle loop waits for it). */
export function echoes(obj: KubeObject, steered: Set<string>, requestedAt: string): boolean {
  if (!steered.has(`${obj.kind}/${obj.metadata?.name}`)) return true;
  const status = obj.status as { lastHandledReconcileAt?: string } | undefined;
  return status?.lastHandledReconcileAt === requestedAt;
}

/**
 * The steering invariants over the run's request log and the objects left; `resumedAt`:
 * when each object's resume was sent, by `kind/name`.
 */
export function checkSteering(
  plan: Map<number, PlannedSteer>,
  log: RequestLogEntry[],
  resumedAt: Map<string, number>,
  left: KubeObject[],
  requestedAt: string,
): SteeringFindings {
  const steered = [...plan.values()];
  const createdWhilePaused = steered
    .filter((s) => s.fromCreation)
    .flatMap((s) =>
      log
        .filter(
          (e) =>
            e.endpoint !== undefined &&
            CREATE_ENDPOINTS.has(e.endpoint) &&
            Date.parse(e.time) < (resumedAt.get(`${s.kind}/${s.name}`) ?? Infinity) &&
            JSON.stringify(e.body ?? "").includes(JSON.stringify(s.name)),
        )
        .map((e) => `${s.kind}/${s.name}: ${e.endpoint} at ${e.time}`),
    );
  const keys = new Set(steered.map((s) => `${s.kind}/${s.name}`));
  const notEchoed = left
    .filter((x) => !echoes(x, keys, requestedAt))
    .map((x) => `${x.kind}/${x.metadata?.name}`);
  return {
    paused: steered.length,
    fromCreation: steered.filter((s) => s.fromCreation).length,
    createdWhilePaused,
    notEchoed,
    violations: [
      ...createdWhilePaused.map(
        (c) => `a create was sent for an object paused from its creation: ${c}`,
      ),
      ...notEchoed.map((k) => `${k} does not echo its reconcile request in status`),
    ],
  };
}
