import type { Logger } from "pino";
import type { CacheReader, IndexFunc } from "./cache.js";
import type { EventRecorder } from "./events.js";
import type { StoreEvent } from "./informer-store.js";
import type { KubeClient } from "./kube.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { DeclaredRule } from "./permissions.js";
import type { Clock, KubeObject, ObjectKey, ResourceDescriptor } from "./resource.js";
import type { QueuePriority } from "./workqueue.js";

/** What a reconcile asks for next. Omit `requeueAfterMs` to wait for the next change. */
export interface ReconcileResult {
  /** Reconcile this key again after this many ms (the poll interval). */
  requeueAfterMs?: number;
  /**
   * The queue lane the requeue waits in when due (fair-lanes.ts); `normal` when absent.
   * `low`: a routine poll of a settled object, behind every key with work to do (new
   * or changed objects, creates in progress, retries) and every follow-up. `deferred`:
   * a follow-up look of an object still settling, behind work but before routine polls.
   */
  priority?: QueuePriority;
}

/** Everything a reconcile gets besides the key. */
export interface ReconcileContext {
  /** The controller's name. */
  readonly controller: string;
  /** The key being reconciled. */
  readonly key: ObjectKey;
  /** Unique per reconcile; in every log line of it. */
  readonly reconcileId: string;
  /** Writes (and the rare uncached read) to the Kubernetes API. */
  readonly kube: KubeClient;
  /** Informer caches: read the primary object and watched objects here. */
  readonly cache: CacheReader;
  readonly clock: Clock;
  /** pino child logger with `controller`, `key` and `reconcileId`. */
  readonly log: Logger;
  /** Kubernetes Events (events.k8s.io/v1), repeats aggregated. */
  readonly events: EventRecorder;
  readonly metrics: RuntimeMetrics;
  /** Aborted when the reconcile is abandoned (its deadline) or shutdown's bound has passed: stop early. */
  readonly signal: AbortSignal;
}

/**
 * A reconcile function: reads the current state (cache first) and drives the world
 * toward it. Level-triggered: it gets a key, never an event. Resolves `{}` (done until
 * the next change or resync) or `{ requeueAfterMs }` on success; throws a
 * RetryableError (backoff) or a TerminalError (no retry until the object or a watched
 * object changes).
 */
export type Reconciler = (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult>;

/** Maps a changed watched object to the primary keys to reconcile. */
export type MapToKeys = (obj: KubeObject, cache: CacheReader) => ObjectKey[];

/**
 * Called after a failed reconcile, with the error, to record it (for example a
 * Synced=False condition) on `obj`: the object as the reconcile last wrote it, else as
 * cached (undefined: gone). What happens to the key is decided by the error class;
 * errors thrown here are logged and otherwise ignored.
 */
export type ErrorPolicy = (
  key: ObjectKey,
  err: unknown,
  ctx: ReconcileContext,
  obj: KubeObject | undefined,
) => Promise<void> | void;

/**
 * Whether a cached primary object needs nothing but routine polls: at start and at
 * the resync such a key waits in the work queue's low lane, behind objects with work.
 */
export type SettledCheck = (obj: KubeObject) => boolean;

/** Which changes reach a watch's map, checked by the runtime (controller-runtime's predicates). */
export interface WatchPredicate {
  /** Only these event types. */
  readonly events?: readonly StoreEvent["type"][];
  /** Only an object (new or old state, each on its own) with a condition of these reasons. */
  readonly reasons?: ReadonlySet<string>;
}

/** A watched kind and how its changes map to primary keys. */
export interface WatchSpec {
  readonly resource: ResourceDescriptor;
  readonly map: MapToKeys;
  /** Which changes reach `map`; undefined: every one. */
  readonly when?: WatchPredicate;
  /**
   * Watch only these namespaces, whatever the manager's namespaces are (e.g. Secrets
   * in the operator's own namespace); undefined: the manager's.
   */
  readonly namespaces?: readonly string[];
}

/** A secondary index on a cached kind. */
export interface IndexSpec {
  readonly resource: ResourceDescriptor;
  readonly name: string;
  readonly fn: IndexFunc;
}

/** A complete controller, as {@link ControllerBuilder.reconcile} returns it. */
export interface ControllerDefinition {
  /** Unique name: metric label, log field, workqueue name. */
  readonly name: string;
  /** The reconciled kind; its keys are the queue's keys. */
  readonly primary: ResourceDescriptor;
  /**
   * Every change of a primary object enqueues it, also a change of status alone and the
   * echo of this process's own write (see controller-keys.ts): for a controller that
   * acts on the status another controller writes. Default false.
   */
  readonly primaryStatusChanges?: boolean;
  readonly watches: readonly WatchSpec[];
  readonly indexes: readonly IndexSpec[];
  /**
   * RBAC rules the controller needs, each with its reason: the operator's generated RBAC
   * is the union of these (src/controllers/permissions.ts) and nothing else.
   */
  readonly permissions: readonly DeclaredRule[];
  /** Workers; default from the operator config. */
  readonly concurrency?: number;
  readonly reconcile: Reconciler;
  readonly errorPolicy?: ErrorPolicy;
  /** Default: Ready=True for the current generation, not Synced=False, not deleting. */
  readonly settled?: SettledCheck;
  /**
   * Keys reconciled at start and at every resync besides the cached primary objects:
   * keys that stand for no object of the primary kind (e.g. the catalog of the
   * operator's default connection, which has no ServiceConnection).
   */
  readonly extraKeys?: () => readonly ObjectKey[];
}

/**
 * Builds a {@link ControllerDefinition}, as src/controllers/cciinstance/controller.ts
 * does (a managed kind's controller is built on it by `managedController`,
 * src/controllers/managed/managed-controller.ts):
 *
 * ```ts
 * controller("cciinstance")
 *   .for(cciInstanceCrd)
 *   .index(cciInstanceCrd, BOUND_ID_INDEX, (o) => claimedIds(o, (o as CciInstance).spec?.instanceId))
 *   .watches(blockVolumeCrd, (volume, cache) => [...]) // keys of CciInstances to reconcile
 *   .permissions([{ apiGroups: ["aidc.io"], resources: ["cciinstances"], verbs: ["get", "list", "watch", "patch"], reason: "watch the objects" }])
 *   .onError((key, err, ctx) => reconciler.onError(key, err, ctx)) // e.g. Synced=False
 *   .reconcile((key, ctx) => reconciler.reconcile(key, ctx)); // { requeueAfterMs } to poll
 * ```
 */
export class ControllerBuilder {
  private primary?: ResourceDescriptor;
  private statusChanges = false;
  private readonly watchList: WatchSpec[] = [];
  private readonly indexList: IndexSpec[] = [];
  private readonly rules: DeclaredRule[] = [];
  private workers?: number;
  private policy?: ErrorPolicy;
  private settledCheck?: SettledCheck;
  private extra?: () => readonly ObjectKey[];

  constructor(private readonly name: string) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
      throw new Error(
        `controller name ${JSON.stringify(name)}: use lower-case letters, digits and -`,
      );
    }
  }

  /**
   * The kind this controller reconciles; each of its changes enqueues its own key
   * (a change of status alone only with `statusChanges`: see
   * {@link ControllerDefinition.primaryStatusChanges}).
   */
  for(resource: ResourceDescriptor, options: { statusChanges?: boolean } = {}): this {
    this.primary = resource;
    this.statusChanges = options.statusChanges === true;
    return this;
  }

  /**
   * Also watch `resource`, objects the controller makes: a change of one (a deletion by
   * hand, an edit) enqueues its controller owner, the primary object named by its
   * ownerReference with `controller: true` (kind and API group of the primary). Give
   * `resource` a `labelSelector` to cache only the objects the controller labels.
   */
  owns(resource: ResourceDescriptor): this {
    return this.watches(resource, (obj) => {
      const primary = this.primary;
      if (!primary) return [];
      const owner = controllerOwner(obj, primary);
      return owner ? [{ namespace: obj.metadata?.namespace ?? "", name: owner }] : [];
    });
  }

  /**
   * Also watch `resource`; on each change (old and new state) `map` names the primary
   * keys to reconcile, of the changes `options.when` lets through. Such a change also
   * lifts a terminal error's hold on those keys.
   */
  watches(
    resource: ResourceDescriptor,
    map: MapToKeys,
    options: { namespaces?: readonly string[]; when?: WatchPredicate } = {},
  ): this {
    this.watchList.push({ resource, map, ...options });
    return this;
  }

  /** Adds an index to the cache of `resource` (cached from then on), read with `cache.byIndex`. */
  index(resource: ResourceDescriptor, name: string, fn: IndexFunc): this {
    this.indexList.push({ resource, name, fn });
    return this;
  }

  /**
   * Declares RBAC rules the controller needs, each with the reason: the generated RBAC
   * grants what the registered controllers declare, so a rule not declared here is not
   * granted.
   */
  permissions(rules: readonly DeclaredRule[]): this {
    this.rules.push(...rules);
    return this;
  }

  /** Number of parallel workers (keys) for this controller. */
  concurrency(workers: number): this {
    if (!Number.isInteger(workers) || workers < 1) throw new Error("concurrency must be >= 1");
    this.workers = workers;
    return this;
  }

  /** Sets the {@link ErrorPolicy}. */
  onError(policy: ErrorPolicy): this {
    this.policy = policy;
    return this;
  }

  /**
   * How to tell a settled object from the cache alone (see {@link SettledCheck}), when
   * the default (Ready=True for its generation) does not fit the kind.
   */
  settled(check: SettledCheck): this {
    this.settledCheck = check;
    return this;
  }

  /** Also reconciles these keys at start and at every resync (see {@link ControllerDefinition.extraKeys}). */
  alsoReconciles(keys: () => readonly ObjectKey[]): this {
    this.extra = keys;
    return this;
  }

  /** Sets the reconcile function and returns the finished definition. */
  reconcile(fn: Reconciler): ControllerDefinition {
    if (!this.primary)
      throw new Error(`controller ${this.name}: call for(resource) before reconcile()`);
    return {
      name: this.name,
      primary: this.primary,
      ...(this.statusChanges ? { primaryStatusChanges: true } : {}),
      watches: [...this.watchList],
      indexes: [...this.indexList],
      permissions: [...this.rules],
      ...(this.workers !== undefined ? { concurrency: this.workers } : {}),
      reconcile: fn,
      ...(this.policy ? { errorPolicy: this.policy } : {}),
      ...(this.settledCheck ? { settled: this.settledCheck } : {}),
      ...(this.extra ? { extraKeys: this.extra } : {}),
    };
  }
}

/**
 * The name of `obj`'s controller owner when it is of kind `primary` (same kind, same API
 * group, any version), else undefined.
 */
export function controllerOwner(obj: KubeObject, primary: ResourceDescriptor): string | undefined {
  for (const ref of (obj.metadata?.ownerReferences ?? []) as {
    apiVersion?: string;
    kind?: string;
    name?: string;
    controller?: boolean;
  }[]) {
    const group = ref.apiVersion?.includes("/") ? ref.apiVersion.split("/")[0] : "";
    if (ref.controller && ref.kind === primary.kind && group === primary.group && ref.name) {
      return ref.name;
    }
  }
  return undefined;
}

/** Starts a {@link ControllerBuilder}: `controller("nasvolume").for(...)...reconcile(fn)`. */
export function controller(name: string): ControllerBuilder {
  return new ControllerBuilder(name);
}
