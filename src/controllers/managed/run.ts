/**
 * One reconcile of a managed object: the object as last written, the context, and the
 * helpers the create and observe steps share (annotation writes, error wrapping).
 */
import { randomUUID } from "node:crypto";
import { setCondition } from "../../runtime/conditions.js";
import type { ReconcileContext } from "../../runtime/controller.js";
import {
  errorMessage,
  errorReason,
  isTerminal,
  RetryableError,
  TerminalError,
} from "../../runtime/errors.js";
import type { KubeObject } from "../../runtime/resource.js";
import { patchStatus, setAnnotations } from "../../runtime/writes.js";
import { ServiceError } from "../../service/errors.js";
import { withKstatusConditions } from "../health-conditions.js";
import { readCreateState } from "./create-protocol.js";
import type {
  ManagedCall,
  ManagedFacts,
  ManagedKind,
  ManagedObject,
  ReadyState,
} from "./external-client.js";

/** Messages that wrap the cause of a failed step (STYLE: constants around the cause). */
export const ERR = {
  operations: "will not order the remote resource",
  preflight: "cannot check the spec against the service before ordering",
  create: "cannot create the remote resource",
  poll: "cannot read the outcome of the subscription",
  lookup: "cannot look the remote resource up by its client token",
  observe: "cannot observe the remote resource",
  update: "cannot update the remote resource",
  delete: "cannot delete the remote resource",
} as const;

/**
 * Re-throws `err` as a RetryableError or TerminalError (by `isTerminal`) whose message
 * is `what: cause` and whose reason is the cause's own PascalCase reason, if any.
 */
export function wrapError(what: string, err: unknown): Error {
  const terminal = isTerminal(err);
  const reason = errorReason(err, terminal ? "ReconcileTerminal" : "ReconcileError");
  const message = `${what}: ${errorMessage(err)}`;
  return terminal
    ? new TerminalError(reason, message, { cause: err })
    : new RetryableError(reason, message, {
        cause: err,
        waiting: err instanceof RetryableError && err.waiting,
      });
}

/** Runs one remote step, wrapping its failure as `what: cause` (see {@link wrapError}). */
export async function step<V>(what: string, fn: () => Promise<V>): Promise<V> {
  try {
    return await fn();
  } catch (err) {
    throw wrapError(what, err);
  }
}

/**
 * True unless `err` proves that a create did not take effect: a service error that is
 * not `outcomeUnknown`. Any other error (unknown origin) may have happened after the
 * request was sent.
 */
export function createMayHaveHappened(err: unknown): boolean {
  return !(err instanceof ServiceError) || err.outcomeUnknown;
}

/** A managed object as the runtime's writers take it (the same JSON object). */
export function toKube(obj: ManagedObject): KubeObject {
  return obj as unknown as KubeObject;
}

/** An object from the runtime as the kind's type (the cache and writers return JSON). */
export function fromKube<T extends ManagedObject>(obj: KubeObject): T {
  return obj as unknown as T;
}

/** A fresh client token for a create. */
export function newClientToken(): string {
  return randomUUID();
}

/** What one step decided: conditions, status facts, requeue. */
export interface Outcome<R> {
  facts: ManagedFacts;
  /** The remote record observed in this reconcile, if any. */
  remote?: R;
  ready: ReadyState;
  synced: ReadyState;
  /** Keep the previous kind status fields (only the conditions change). */
  keepStatus?: boolean;
  /** Undefined: wait for the next change. */
  requeueAfterMs?: number;
  /** The requeue is the routine poll of a settled object (low priority in the queue). */
  routine?: boolean;
}

/** The Synced=True condition of a successful reconcile. */
export const SYNCED_OK: ReadyState = { status: "True", reason: "ReconcileSuccess", message: "" };

/** The state of one reconcile; `obj` follows every annotation write. */
export class ManagedRun<T extends ManagedObject, R> implements ManagedCall<T> {
  constructor(
    readonly kind: ManagedKind<T, R>,
    public obj: T,
    readonly ctx: ReconcileContext,
  ) {}

  /**
   * See {@link ManagedCall.annotate}. The same write adds the kind's finalizer if the
   * object lacks it, so the first annotation of a create (`create-pending`) also
   * carries the finalizer, before anything remote is ordered.
   */
  async annotate(annotations: Record<string, string | null>): Promise<T> {
    this.obj = fromKube<T>(
      await setAnnotations(this.ctx.kube, this.kind.resource, toKube(this.obj), annotations, {
        finalizer: this.kind.finalizer,
      }),
    );
    return this.obj;
  }

  /** metadata.generation (0 when absent). */
  get generation(): number {
    return this.obj.metadata?.generation ?? 0;
  }

  /** Milliseconds since an RFC 3339 time (NaN when it is not one). */
  ageOf(at: string): number {
    return this.ctx.clock.now().getTime() - Date.parse(at);
  }

  /** A Normal event on the object. */
  normal(reason: string, note: string): void {
    this.ctx.events.normal(toKube(this.obj), reason, note);
  }

  /** A Warning event on the object. */
  warning(reason: string, note: string): void {
    this.ctx.events.warning(toKube(this.obj), reason, note);
  }
}

/** Sets conditions on `obj`'s current status and patches it when it changed. */
export async function writeConditions<T extends ManagedObject>(
  ctx: ReconcileContext,
  kind: ManagedKind<T, unknown>,
  obj: T,
  conds: Parameters<typeof setCondition>[1][],
): Promise<void> {
  const generation = obj.metadata?.generation;
  let conditions = obj.status?.conditions;
  for (const c of conds) conditions = setCondition(conditions, c, generation, ctx.clock.now());
  conditions = withKstatusConditions(conditions, generation, ctx.clock.now());
  await patchStatus(ctx.kube, kind.resource, toKube(obj), { ...(obj.status ?? {}), conditions });
}

/** The facts the annotations (and the previous status) show. */
export function factsOf<T extends ManagedObject>(run: ManagedRun<T, unknown>): ManagedFacts {
  const state = readCreateState(run.obj.metadata?.annotations);
  const prev = (run.obj.status as { subscription?: ManagedFacts["subscription"] } | undefined)
    ?.subscription;
  return {
    ...(state.externalId ? { externalId: state.externalId } : {}),
    ...(state.subscriptionKey ? { subscriptionKey: state.subscriptionKey } : {}),
    ...(prev ? { subscription: prev } : {}),
  };
}
