/**
 * One reconcile of a managed object as its steps see it: the {@link ManagedRun} they get,
 * what they answer ({@link Outcome} or {@link Next}), how soon to look again, their errors.
 */
import type { ReconcileContext } from "../../runtime/controller.js";
import {
  ConflictError,
  errorMessage,
  errorReason,
  isTerminal,
  RetryableError,
  requeueAfterOf,
  TerminalError,
} from "../../runtime/errors.js";
import { setAnnotations } from "../../runtime/object-writes.js";
import type { QueuePriority } from "../../runtime/workqueue.js";
import type { CallContext } from "../../service/call-context.js";
import type { ConnectionSource } from "../connections/registry.js";
import type { EventReason } from "../event-reasons.js";
import {
  type ManagedCall,
  type ManagedFacts,
  type ManagedObject,
  type ReadyState,
  type ReferenceResolution,
  referenceReader,
} from "./call.js";
import {
  type CreatePending,
  type CreateState,
  callsOf,
  type Policies,
  policiesOf,
  readCreateState,
  reconcileRequest,
} from "./decisions.js";
import type { KindClient, ManagedKind } from "./external-client.js";
import type { Absences } from "./gone-evidence.js";
import type { BindingRefusal } from "./tenancy.js";

/** What a reconcile of a live object ends with: conditions, status facts, requeue. */
export interface Outcome<R> {
  facts: ManagedFacts;
  remote?: R;
  ready: ReadyState;
  synced: ReadyState;
  /** Keep the previous kind status fields (only the conditions change). */
  keepStatus?: boolean;
  /** Undefined: wait for the next change. */
  requeueAfterMs?: number;
  /** The requeue's lane: `low` routine poll, `deferred` follow-up. */
  priority?: QueuePriority;
}

/** The create's subscription as the status shows it. */
export type Subscription = ManagedFacts["subscription"];

/**
 * The answer of a step: the outcome that ends the reconcile, or the step the dispatcher
 * runs next (reconciler.ts). Observe's `binding`: the write that binds the id, under way;
 * Poll's `justOrdered`: the create was sent in this reconcile, its key not written yet.
 */
export type Next<R> =
  | { step: "Done"; outcome: Outcome<R> }
  | { step: "Observe"; externalId: string; subscription?: Subscription; binding?: Promise<unknown> }
  | { step: "Poll"; key: string; pending: CreatePending | undefined; justOrdered?: boolean }
  | { step: "Lookup"; pending: CreatePending }
  | { step: "Create" }
  /** The create failed remotely for this generation: wait for a spec change. */
  | { step: "CreateFailed" }
  | { step: "Refused"; refusal: BindingRefusal }
  /** The create's outcome cannot be known (`why`); the user decides. */
  | { step: "Unknown"; why: string };

type PollOptions = { pollIntervalMs: number; subscriptionPollMs?: number };

export const DEFAULT_SUBSCRIPTION_POLL_MS = 1_000;

/** The first poll of a pending subscription: the loop's `subscriptionPollMs`, else the default. */
export function firstSubscriptionPollMs(options: { subscriptionPollMs?: number }): number {
  return options.subscriptionPollMs ?? DEFAULT_SUBSCRIPTION_POLL_MS;
}

/** The requeue while a subscription is pending: half its age (NaN: `firstMs`), within the bounds. */
export function subscriptionPollDelay(ageMs: number, firstMs: number, maxMs: number): number {
  if (!Number.isFinite(ageMs) || ageMs < 0) return Math.min(firstMs, maxMs);
  return Math.min(Math.max(firstMs, Math.round(ageMs / 2)), Math.max(firstMs, maxMs));
}

/** {@link subscriptionPollDelay} from the first subscription poll up to the poll interval. */
export function agingPollMs(ageMs: number, options: PollOptions): number {
  return subscriptionPollDelay(ageMs, firstSubscriptionPollMs(options), options.pollIntervalMs);
}

/** The requeue while something should end soon: five first polls, at most the poll interval. */
export function soonPollMs(options: PollOptions) {
  return Math.min(options.pollIntervalMs, 5 * firstSubscriptionPollMs(options));
}

export const SYNCED_OK: ReadyState = { status: "True", reason: "ReconcileSuccess", message: "" };

/** Ready=False Creating: the remote resource is on its way, with what it waits for. */
export function creatingReady(message: string): ReadyState {
  return { status: "False", reason: "Creating", message };
}

export function done<R>(outcome: Outcome<R>): Next<R> {
  return { step: "Done", outcome };
}

/** Messages that wrap the cause of a failed step. */
export const ERR = {
  operations: "will not order the remote resource",
  preflight: "cannot check the spec against the service before ordering",
  create: "cannot create the remote resource",
  poll: "cannot read the outcome of the subscription",
  lookup: "cannot look up the remote resource of an unfinished create",
  observe: "cannot observe the remote resource",
  update: "cannot update the remote resource",
  beforeDelete: "cannot prepare the remote resource for deletion",
  delete: "cannot delete the remote resource",
} as const;

/**
 * `err` as a RetryableError or TerminalError (by `isTerminal`): message `what: cause`,
 * the cause's own reason if any. A ConflictError stays one: the runtime retries it quietly.
 */
export function wrapError(what: string, err: unknown): Error {
  if (err instanceof ConflictError) return err;
  const terminal = isTerminal(err);
  const reason = errorReason(err, terminal ? "ReconcileTerminal" : "ReconcileError");
  const message = `${what}: ${errorMessage(err)}`;
  return terminal
    ? new TerminalError(reason, message, { cause: err })
    : new RetryableError(reason, message, {
        cause: err,
        waiting: err instanceof RetryableError && err.waiting,
        ...(requeueAfterOf(err) !== undefined ? { requeueAfterMs: requeueAfterOf(err) } : {}),
      });
}

/** Runs one remote step, its failure wrapped as `what: cause` ({@link wrapError}). */
export async function step<V>(what: string, fn: () => Promise<V>): Promise<V> {
  try {
    return await fn();
  } catch (err) {
    throw wrapError(what, err);
  }
}

export type Connect<T extends ManagedObject, R, Refs> = (
  obj: T,
  calls: CallContext,
) => KindClient<T, R, Refs>;

/** crossplane-runtime's Connect: the kind's client for an object's account, under `calls`. */
export function connector<T extends ManagedObject, R, Refs>(
  kind: ManagedKind<T, R, Refs>,
  connections: ConnectionSource,
): Connect<T, R, Refs> {
  return (obj, calls) => {
    const conn = connections.forObject(obj);
    return kind.connect({ ...conn, service: conn.service.account.withCall(calls) });
  };
}

/** The state of one reconcile; `obj` and `state` follow every annotation write. */
export class ManagedRun<T extends ManagedObject, R, Refs = unknown> {
  /** What the kind's client gets: not the Kubernetes client or the cache. */
  readonly call: ManagedCall<T, Refs>;
  /** The kind's {@link resolveReferences} answer, once it ran. */
  resolution: ReferenceResolution<Refs | undefined> | undefined;
  /** The create protocol's annotations of `obj` (decisions.ts), parsed once per write. */
  state: CreateState;
  /** The `aidc.io/reconcile-requested-at` this reconcile handles. */
  readonly reconcileRequest: string | undefined;
  /** How its service calls go (`callsOf`); work from {@link changing} on. */
  calls: CallContext;
  private connected: KindClient<T, R, Refs> | undefined;

  constructor(
    readonly kind: ManagedKind<T, R, Refs>,
    public obj: T,
    readonly ctx: ReconcileContext,
    private readonly connect: Connect<T, R, Refs>,
    /** The list absences of the kind's objects (gone-evidence.ts); the loop keeps one per kind. */
    readonly absences: Absences = new Map(),
  ) {
    this.state = readCreateState(obj.metadata?.annotations);
    this.reconcileRequest = reconcileRequest(obj);
    this.calls = callsOf(obj, this.reconcileRequest !== undefined, ctx.signal);
    const run = this;
    this.call = {
      get obj() {
        return run.obj;
      },
      get refs() {
        return run.refs;
      },
      now: () => ctx.clock.now(),
      log: ctx.log,
      normal: (reason, note) => run.normal(reason, note),
      warning: (reason, note) => run.warning(reason, note),
      annotate: (annotations) => run.annotate(annotations),
    };
  }

  /** The kind's client for the object's account, connected at first use (throws without one). */
  get client(): KindClient<T, R, Refs> {
    this.connected ??= this.connect(this.obj, this.calls);
    return this.connected;
  }

  /** The reconcile changes the remote resource from here on: its calls are no longer routine. */
  changing(): void {
    if (!this.calls.routine && !this.calls.followUp) return;
    this.calls = { routine: false, signal: this.calls.signal };
    this.connected = undefined;
  }

  get policies(): Policies {
    return policiesOf(this.obj);
  }

  /**
   * The reference step (crossplane-runtime's ReferenceResolver): the kind reads what the
   * object refers to from the cache (its namespace) and answers what the client needs, or
   * why the object must wait. Create-only references count as resolved once `bound`.
   */
  resolveReferences(bound: boolean): void {
    const { kind, obj } = this;
    if (!kind.resolveReferences) this.resolution = undefined;
    else if (kind.referencesForCreateOnly && bound) {
      this.resolution = { resolved: true, refs: undefined };
    } else {
      const reader = referenceReader(this.ctx.cache, obj.metadata?.namespace ?? "", bound);
      this.resolution = kind.resolveReferences(obj, reader);
    }
  }

  get refs(): Refs | undefined {
    return this.resolution?.resolved ? this.resolution.refs : undefined;
  }

  get unresolved(): (ReferenceResolution<Refs> & { resolved: false }) | undefined {
    return this.resolution && !this.resolution.resolved ? this.resolution : undefined;
  }

  get adoptId(): string | undefined {
    return this.kind.adoptId?.(this.obj);
  }

  /** Sets (string) or removes (null) annotations, and the finalizer if missing, in one write. */
  async annotate(annotations: Record<string, string | null>): Promise<T> {
    this.obj = (await setAnnotations(this.ctx.kube, this.kind.resource, this.obj, annotations, {
      finalizer: this.kind.finalizer,
    })) as T;
    this.state = readCreateState(this.obj.metadata?.annotations);
    return this.obj;
  }

  /** The facts the loop's annotations and the previous status show. */
  facts(): ManagedFacts {
    const { state } = this;
    const prev = (this.obj.status as { subscription?: Subscription } | undefined)?.subscription;
    return {
      ...(state.externalId ? { externalId: state.externalId } : {}),
      ...(state.subscriptionKey ? { subscriptionKey: state.subscriptionKey } : {}),
      ...(prev ? { subscription: prev } : {}),
      ...(state.pending && !state.externalId ? { creating: true } : {}),
    };
  }

  /** The object's key in {@link absences}: its uid, else its name. */
  get absenceKey(): string {
    return this.obj.metadata?.uid ?? this.obj.metadata?.name ?? "";
  }

  /** The bound resource was read: listings that lacked it no longer count (gone-evidence.ts). */
  forgetAbsences(): void {
    this.absences.delete(this.absenceKey);
  }

  get generation(): number {
    return this.obj.metadata?.generation ?? 0;
  }

  /** Milliseconds since an RFC 3339 time (NaN when it is not one). */
  ageOf(at: string): number {
    return this.ctx.clock.now().getTime() - Date.parse(at);
  }

  normal(reason: EventReason, note: string): void {
    this.ctx.events.normal(this.obj, reason, note);
  }

  warning(reason: EventReason, note: string): void {
    this.ctx.events.warning(this.obj, reason, note);
  }
}
