/**
 * One reconcile of a managed object as its steps see it: the run they get
 * ({@link ManagedRun}: the object as last written, its loop annotations parsed once, its
 * references, its account's client at first use) and what they answer: an
 * {@link Outcome} that ends the reconcile, or the {@link Next} step the dispatcher
 * (reconciler.ts) runs; a failure is thrown as `<step>: <cause>` ({@link step}).
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
import type {
  ManagedCall,
  ManagedFacts,
  ManagedObject,
  ReadyState,
  ReferenceResolution,
} from "./call.js";
import { referenceReader } from "./call.js";
import { type CreatePending, type CreateState, readCreateState } from "./create-protocol.js";
import { callsOf, type Policies, policiesOf, reconcileRequest } from "./decisions.js";
import type { KindClient, ManagedKind } from "./external-client.js";
import type { Absences } from "./gone-evidence.js";
import type { BindingRefusal } from "./tenancy.js";

/** What a reconcile of a live object ends with: conditions, status facts, requeue. */
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
  /** The requeue's lane (runtime/fair-lanes.ts): `low` routine poll, `deferred` follow-up. */
  priority?: QueuePriority;
}

/** The create's subscription as the status shows it. */
export type Subscription = ManagedFacts["subscription"];

/** The answer of a step: an outcome, or the step the dispatcher runs next. */
export type Next<R> =
  /** The reconcile ends with this outcome. */
  | { step: "Done"; outcome: Outcome<R> }
  /** Observe (and update) `externalId`; `binding`: the write that binds it, under way. */
  | { step: "Observe"; externalId: string; subscription?: Subscription; binding?: Promise<unknown> }
  /** Poll the create's subscription `key`; `justOrdered`: sent in this reconcile, key unwritten. */
  | { step: "Poll"; key: string; pending: CreatePending | undefined; justOrdered?: boolean }
  /** Look the resource of an unfinished create up by its client token. */
  | { step: "Lookup"; pending: CreatePending }
  /** Place a new order (a marker whose create was never sent was dropped). */
  | { step: "Create" }
  /** The create failed remotely for this generation: wait for a spec change. */
  | { step: "CreateFailed" }
  /** The binding is refused (tenancy.ts): nothing is changed. */
  | { step: "Refused"; refusal: BindingRefusal }
  /** The create's outcome cannot be known (`why`); the user decides. */
  | { step: "Unknown"; why: string };

/** The Synced=True condition of a successful reconcile. */
export const SYNCED_OK: ReadyState = { status: "True", reason: "ReconcileSuccess", message: "" };

/** Ready=False Creating: the remote resource is on its way, with what it waits for. */
export function creatingReady(message: string): ReadyState {
  return { status: "False", reason: "Creating", message };
}

/** The step that ends the reconcile with `outcome`. */
export function done<R>(outcome: Outcome<R>): Next<R> {
  return { step: "Done", outcome };
}

/** Messages that wrap the cause of a failed step (constants around the cause). */
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
 * Re-throws `err` as a RetryableError or TerminalError (by `isTerminal`) whose message
 * is `what: cause` and whose reason is the cause's own PascalCase reason, if any. A
 * ConflictError stays one: the runtime retries it quietly, whatever step wrote.
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

/** Runs one remote step, wrapping its failure as `what: cause` (see {@link wrapError}). */
export async function step<V>(what: string, fn: () => Promise<V>): Promise<V> {
  try {
    return await fn();
  } catch (err) {
    throw wrapError(what, err);
  }
}

/** Connects a kind to the account of an object, for the calls of one reconcile. */
export type Connect<T extends ManagedObject, R, Refs> = (
  obj: T,
  calls: CallContext,
) => KindClient<T, R, Refs>;

/**
 * crossplane-runtime's Connect: the kind's client for the object's connection, its
 * service calls made under `calls` (routine or not, the reconcile's abort signal).
 */
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
  /** The kind's {@link resolveReferences} answer; undefined before it ran or without one. */
  resolution: ReferenceResolution<Refs | undefined> | undefined;
  /** The loop's annotations of `obj` (create-protocol.ts), parsed once per write. */
  state: CreateState;
  /** The `aidc.io/reconcile-requested-at` this reconcile handles (decisions.ts). */
  readonly reconcileRequest: string | undefined;
  /** How its service calls go (decisions.ts, `callsOf`); work from {@link changing} on. */
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

  /**
   * The kind's client for the object's account and {@link calls}, connected at first use
   * (a step that calls nothing remote needs no connection); throws when the connection
   * is missing or refuses the namespace.
   */
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

  /** What the object's spec.managementPolicies let the loop do (decisions.ts). */
  get policies(): Policies {
    return policiesOf(this.obj);
  }

  /**
   * The reference step (crossplane-runtime's ReferenceResolver): before anything remote,
   * the kind reads what the object refers to from the cache (its own namespace) and
   * answers what the client needs, or why the object must wait. Create-only references
   * (`referencesForCreateOnly`) count as resolved once the object is `bound`.
   */
  resolveReferences(bound: boolean): void {
    const { kind, obj } = this;
    if (!kind.resolveReferences) this.resolution = undefined;
    else if (kind.referencesForCreateOnly && bound) {
      this.resolution = { resolved: true, refs: undefined };
    } else {
      const namespace = obj.metadata?.namespace ?? "";
      this.resolution = kind.resolveReferences(
        obj,
        referenceReader(this.ctx.cache, namespace, bound),
      );
    }
  }

  /** See {@link ManagedCall.refs}. */
  get refs(): Refs | undefined {
    return this.resolution?.resolved ? this.resolution.refs : undefined;
  }

  /** True when the kind resolves references and they do not resolve now. */
  get unresolved(): (ReferenceResolution<Refs> & { resolved: false }) | undefined {
    return this.resolution && !this.resolution.resolved ? this.resolution : undefined;
  }

  /** The id in the spec that adopts a remote resource, if the kind has one. */
  get adoptId(): string | undefined {
    return this.kind.adoptId?.(this.obj);
  }

  /**
   * Sets (string) or removes (null) annotations; the same write adds the finalizer if
   * missing, so a create's `create-pending` carries it before anything is ordered.
   */
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
    const prev = (this.obj.status as { subscription?: ManagedFacts["subscription"] } | undefined)
      ?.subscription;
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

  /** metadata.generation (0 when absent). */
  get generation(): number {
    return this.obj.metadata?.generation ?? 0;
  }

  /** Milliseconds since an RFC 3339 time (NaN when it is not one). */
  ageOf(at: string): number {
    return this.ctx.clock.now().getTime() - Date.parse(at);
  }

  /** A Normal event on the object. */
  normal(reason: EventReason, note: string): void {
    this.ctx.events.normal(this.obj, reason, note);
  }

  /** A Warning event on the object. */
  warning(reason: EventReason, note: string): void {
    this.ctx.events.warning(this.obj, reason, note);
  }
}
