/**
 * One reconcile of a managed object: the object as last written, its loop annotations
 * read once into one typed value (`state`, read again only after this reconcile writes
 * them), the facts they and the previous status show, its references as the reference
 * step resolved them, and the context. The loop holds the whole reconcile context; the
 * kind's client sees only `run.call`, and is connected to the object's account at its
 * first use ({@link connector}).
 */
import type { CacheReader } from "../../runtime/cache.js";
import type { ConditionInput } from "../../runtime/conditions.js";
import type { ReconcileContext } from "../../runtime/controller.js";
import { keyOf, type ResourceDescriptor } from "../../runtime/resource.js";
import { setAnnotations } from "../../runtime/writes.js";
import type { CallContext } from "../../service/call-context.js";
import type { ConnectionSource } from "../connections/registry.js";
import type { EventReason } from "../event-reasons.js";
import type {
  ManagedCall,
  ManagedFacts,
  ManagedObject,
  ReferenceReader,
  ReferenceResolution,
} from "./call.js";
import { type CreateState, readCreateState } from "./create-protocol.js";
import { callsOf, type Policies, policiesOf, reconcileRequest } from "./decisions.js";
import type { KindClient, ManagedKind } from "./external-client.js";
import type { Absences } from "./gone-evidence.js";

/** Connects a kind to the account of an object, for the calls of one reconcile. */
export type Connect<T extends ManagedObject, R, Refs> = (
  obj: T,
  calls: CallContext,
) => KindClient<T, R, Refs>;

/**
 * Connects `kind` to the account of an object for one reconcile (crossplane-runtime's
 * Connect): the kind's client for the object's connection, whose service calls are
 * made under `calls` (routine or not, the reconcile's abort signal). What a kind
 * remembers across reconciles it keeps per account (account-memory.ts).
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

/** A {@link ReferenceReader} over `cache` for the objects of `namespace`. */
export function referenceReader(
  cache: CacheReader,
  namespace: string,
  bound: boolean,
): ReferenceReader {
  return {
    bound,
    get: <O>(resource: ResourceDescriptor, name: string) =>
      cache.get(resource, { namespace, name }) as O | undefined,
    list: <O>(resource: ResourceDescriptor) => cache.list(resource, namespace) as O[],
  };
}

/** Type of the condition of the reference step ({@link ManagedRun.resolveReferences}). */
export const REFERENCES_RESOLVED = "ReferencesResolved";

/** The ReferencesResolved condition of a resolution. */
export function referencesCondition(resolution: ReferenceResolution<unknown>): ConditionInput {
  return resolution.resolved
    ? { type: REFERENCES_RESOLVED, status: "True", reason: "Resolved", message: "" }
    : {
        type: REFERENCES_RESOLVED,
        status: "False",
        reason: resolution.reason,
        message: resolution.message,
      };
}

/** The state of one reconcile; `obj` and `state` follow every annotation write. */
export class ManagedRun<T extends ManagedObject, R, Refs = unknown> {
  /**
   * What the kind's client gets (`client.observe(run.call, id)`...): the object, the
   * resolved references, the time, a logger, events on the object and annotation
   * writes; not the Kubernetes client or the cache.
   */
  readonly call: ManagedCall<T, Refs>;
  /**
   * The answer of the kind's reference resolution in this reconcile
   * ({@link resolveReferences}); undefined before the step ran, in deletion before the
   * kind's `beforeDelete`, or when the kind has none.
   */
  resolution: ReferenceResolution<Refs | undefined> | undefined;
  /** The loop's annotations of `obj` (create-protocol.ts), parsed once per write. */
  state: CreateState;
  /**
   * The value of `aidc.io/reconcile-requested-at` this reconcile handles (decisions.ts):
   * the remote resource is read in detail, and status.lastHandledReconcileAt echoes it.
   */
  readonly reconcileRequest: string | undefined;
  /**
   * How this reconcile's service calls are made (decisions.ts, `callsOf`): routine
   * observation of a settled object, a follow-up read of one still settling, or work,
   * from the object as read and whether the user asked for the reconcile; work from
   * the first change on ({@link changing}). Aborted with the reconcile (its deadline).
   */
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
   * The kind's client for the object's account (its ServiceConnection, else the
   * default) and this reconcile's calls ({@link calls}), connected at first use: a step
   * that calls nothing remote needs no connection. Throws when the connection is
   * missing or refuses the namespace.
   */
  get client(): KindClient<T, R, Refs> {
    this.connected ??= this.connect(this.obj, this.calls);
    return this.connected;
  }

  /**
   * The reconcile changes the remote resource from here on (an update): its calls are
   * no longer routine observation.
   */
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
   * Sets spec fields (a merge patch conditioned on the resourceVersion) and makes the
   * result `obj`: only LateInitialize writes the spec.
   */
  async setSpec(fields: Record<string, unknown>): Promise<T> {
    this.obj = (await this.ctx.kube.patch(this.kind.resource, keyOf(this.obj), {
      metadata: { resourceVersion: this.obj.metadata?.resourceVersion },
      spec: fields,
    })) as T;
    return this.obj;
  }

  /**
   * The reference step (crossplane-runtime's ReferenceResolver): before anything remote,
   * the kind's `resolveReferences` reads the objects the object refers to from the cache
   * (its own namespace only) and answers what the client needs from them, or why the
   * object must wait; kept as {@link resolution} (`call.refs`, the ReferencesResolved
   * condition). None when the kind has no such step; a kind whose references are
   * create-only (`referencesForCreateOnly`) counts as resolved, without references, once
   * the object is `bound` to a remote resource (an id recorded or adopted).
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
   * Sets (string) or removes (null) annotations of the object. The same write adds the
   * kind's finalizer if the object lacks it, so the first annotation of a create
   * (`create-pending`) also carries the finalizer, before anything remote is ordered.
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
      ...(state.pending ? { creating: true } : {}),
    };
  }

  /** The object's key in {@link absences}: its uid, else its name. */
  get absenceKey(): string {
    return this.obj.metadata?.uid ?? this.obj.metadata?.name ?? "";
  }

  /**
   * The service answered a read of the bound resource: the complete listings that
   * lacked it no longer count as in a row (gone-evidence.ts).
   */
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
