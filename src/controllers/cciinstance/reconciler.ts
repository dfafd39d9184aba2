/**
 * The CciInstance reconciler: observe-only. Order of a reconcile: read the object →
 * (deleted: say the instance is kept) → (paused: the managed loop's one condition) →
 * the ConfigMap of a renamed or removed spec.exportTo.configMapName deleted
 * (export.ts) → the shared list snapshot → bind → detail and error details only when
 * needed (or asked: reconcile-requested-at) → save at most one image → status (with
 * the ConfigMap name) → connection details → requeue.
 */
import {
  CCI_INSTANCE_REASONS,
  type CciInstanceStatus,
  cciInstanceCrd,
} from "../../crds/cciinstance.js";
import {
  conditionMessage,
  getCondition,
  type KubeObject,
  type ObjectKey,
  patchStatus,
  type ReconcileContext,
  type ReconcileResult,
  removeCondition,
  setAnnotations,
} from "../../runtime/index.js";
import { ServiceNotFoundError } from "../../service/errors.js";
import type { CciInstance } from "../../service/schemas/cci.js";
import { reasonEvents } from "../event-reasons.js";
import { failedSyncCondition } from "../health-conditions.js";
import { heldReadyCondition, paused } from "../managed/condition-writes.js";
import { ANNOTATIONS, isPaused, lastHandled, reconcileRequest } from "../managed/decisions.js";
import { releaseRenamedExports, writeConnectionDetails } from "../managed/export.js";
import { EXPORT_RECHECK_POLLS, ExportMemory } from "../managed/export-memory.js";
import {
  adoptionRefusal,
  type BindingRefusal,
  BOUND_ID_INDEX,
  decideFirstBinder,
  mayAdopt,
} from "../managed/tenancy.js";
import { announceChanges, boundCondition, KeptInstances } from "./announcements.js";
import { attachedStorage } from "./attached-storage.js";
import {
  type Binding,
  bindingSource,
  decideBinding,
  goneConditions,
  recordedInstanceId,
  SYNCED,
  unboundConditions,
} from "./binding.js";
import { saveImages } from "./image-saver.js";
import { IMAGES_ANNOTATION, parseLedger, type SaveBackoff } from "./images.js";
import { type CciObject, withConditions } from "./objects.js";
import type { CciAccount } from "./snapshot.js";
import { cciExport, isInError, needsDetail, observedStatus, readyCondition } from "./status.js";

const R = CCI_INSTANCE_REASONS.names;

/** What the reconciler is built with (owned by the controller factory). */
export interface CciReconcilerDeps {
  /**
   * The account of `obj` for one reconcile (`signal`; its calls are work, not routine,
   * when the user `requested` it); throws when the connection refuses it.
   */
  connect(obj: KubeObject, signal: AbortSignal, requested?: boolean): CciAccount;
  pollIntervalMs: number;
  saveBackoff: SaveBackoff;
  /** `adoption.namespaces` of the operator config (managed/tenancy.ts); default none. */
  adoptionNamespaces?: readonly string[];
}

const CCI = cciInstanceCrd;

/** The reconciler, with the small memory it needs to report deletions. */
export class CciInstanceReconciler {
  /** Last seen identity of each object, to say on deletion that the instance is kept. */
  private readonly kept = new KeptInstances();
  /** What `spec.exportTo` last wrote for each object. */
  private readonly exports: ExportMemory;

  constructor(private readonly deps: CciReconcilerDeps) {
    this.exports = new ExportMemory(deps.pollIntervalMs * EXPORT_RECHECK_POLLS);
  }

  /** The CciInstances this process bound to `instanceId` (the cache may not show it yet). */
  boundTo(instanceId: string): ObjectKey[] {
    return this.kept.boundTo(instanceId);
  }

  /** Reconciles one CciInstance. */
  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const obj = ctx.cache.get<CciObject>(CCI, key);
    if (!obj || obj.metadata?.deletionTimestamp) {
      const uid = this.kept.reportDeletion(key, ctx.events);
      if (uid !== undefined) this.exports.forget(uid);
      return {};
    }
    this.kept.remember(key, obj);
    if (isPaused(obj)) return paused(ctx, { resource: CCI }, obj);
    // Before any status write records the new name (a crash between leaves the old one).
    const exported = obj.spec.exportTo?.configMapName;
    const recorded = obj.status?.exportedConfigMapName;
    if (recorded !== undefined && recorded !== exported) {
      const names = { exportedConfigMapName: exported };
      await releaseRenamedExports(ctx.kube, CCI, obj, names, this.exports);
    }
    // The operator creates no CCI instance: every binding is an adoption, allowed only
    // where adoption is (or kept when the status shows the operator bound it before).
    const namespace = obj.metadata?.namespace ?? "";
    if (!mayAdopt(this.deps.adoptionNamespaces ?? [], namespace) && !obj.status?.instanceId) {
      return this.unbound(obj, adoptionRefusal(namespace, "a CCI instance"), ctx);
    }
    const claimed = obj.spec.instanceId ?? obj.metadata?.annotations?.[ANNOTATIONS.externalId];
    const early = claimed ? this.conflict(obj, claimed, ctx) : undefined;
    if (early) return this.unbound(obj, early, ctx);
    // Reconcile now (aidc.io/reconcile-requested-at): a fresh list walk and the detail.
    const requested = reconcileRequest(obj) !== undefined;
    const account = this.deps.connect(obj, ctx.signal, requested);
    if (requested) account.snapshot.invalidate();
    const snapshot = await account.snapshot.get(account.service);
    const annotations = obj.metadata?.annotations ?? {};
    const binding = decideBinding({
      spec: obj.spec,
      recordedId: recordedInstanceId(annotations[ANNOTATIONS.externalId], obj.status?.instanceId),
      instances: snapshot.byId.values(),
    });
    if (!binding.bound) return this.unbound(obj, binding, ctx);
    const conflict = this.conflict(obj, binding.instanceId, ctx);
    if (conflict) return this.unbound(obj, conflict, ctx);

    let current = obj;
    const id = binding.instanceId;
    if (annotations[ANNOTATIONS.externalId] !== id) {
      current = await setAnnotations(ctx.kube, CCI, obj, { [ANNOTATIONS.externalId]: id });
      reasonEvents(ctx.events).normal(
        current,
        "Bound",
        `observing CCI instance ${id} (bound by ${bindingSource(binding.via)})`,
      );
    }
    this.kept.remember(key, current, id);

    const listed = snapshot.byId.get(id);
    let record: CciInstance;
    let detail: CciInstance | undefined;
    // saveImageStatus comes from the list, so the list's time is what images may rely on.
    let observedAt = snapshot.fetchedAt;
    try {
      if (!listed) observedAt = ctx.clock.now();
      if (!listed || requested || needsDetail(current.status, listed)) {
        detail = await account.service.get(id);
      }
      record = listed ?? (detail as CciInstance);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return this.gone(current, id, ctx);
      throw err;
    }
    const errorDetails = isInError(record.status)
      ? await account.service.errorDetails(id)
      : undefined;
    const observed = observedStatus({
      instanceId: id,
      record,
      ...(detail ? { detail } : {}),
      ...(errorDetails ? { errorDetails } : {}),
      ...(current.status ? { previous: current.status } : {}),
    });

    const images = await saveImages({
      ctx,
      obj: current,
      instanceId: id,
      images: current.spec.images ?? [],
      ledger: parseLedger(current.metadata?.annotations?.[IMAGES_ANNOTATION]),
      instance: { status: record.status, saveImageStatus: listed?.saveImageStatus, observedAt },
      service: account.service,
      backoff: this.deps.saveBackoff,
      resource: CCI,
    });
    current = images.obj;

    const now = ctx.clock.now();
    const gen = current.metadata?.generation;
    // Without an images condition, ImagesSaved goes (the rest keep their places).
    const conditions = withConditions(
      current,
      [
        boundCondition(binding),
        readyCondition(observed),
        SYNCED,
        ...(images.condition ? [images.condition] : []),
      ],
      now,
      images.condition
        ? current.status?.conditions
        : removeCondition(current.status?.conditions, "ImagesSaved"),
    );
    const storage = attachedStorage(ctx.cache, current.metadata?.namespace ?? "", id);
    const status: CciInstanceStatus = {
      ...observed,
      ...(images.statuses.length > 0 ? { images: images.statuses } : {}),
      ...(storage.length > 0 ? { attachedStorage: storage } : {}),
      ...(gen !== undefined ? { observedGeneration: gen } : {}),
      ...lastHandled(current),
      conditions,
      exportedConfigMapName: current.spec.exportTo?.configMapName,
    };
    const previous = current.status;
    const { notKept } = await patchStatus(ctx.kube, CCI, current, status);
    if (notKept) reasonEvents(ctx.events).warning(current, "WriteNotKept", notKept);
    announceChanges(ctx.events, current, previous, status);
    await writeConnectionDetails(ctx.kube, CCI, current, cciExport(status), this.exports, (note) =>
      ctx.events.warning(current, "ConnectionDetailsConflict", note),
    );
    const poll = this.deps.pollIntervalMs;
    const untilRetry = images.retryAt ? images.retryAt.getTime() - now.getTime() : poll;
    const after = Math.max(0, Math.min(poll, untilRetry));
    return { requeueAfterMs: after, ...(after === poll ? { priority: "low" } : {}) };
  }

  /**
   * Records a failed reconcile as Synced=False, with the reason every kind gives the
   * error (a 403 is ApiKeyRefused; see failedSyncCondition). The runtime logs it and
   * emits the event.
   */
  async onError(err: unknown, ctx: ReconcileContext, found: KubeObject | undefined) {
    const obj = found as CciObject | undefined;
    if (!obj || obj.metadata?.deletionTimestamp) return;
    const ready = heldReadyCondition(err, getCondition(obj.status?.conditions, "Ready"));
    const failed = [failedSyncCondition(err), ...(ready ? [ready] : [])];
    const conditions = withConditions(obj, failed, ctx.clock.now());
    await patchStatus(ctx.kube, CCI, obj, { ...(obj.status ?? {}), conditions });
  }

  /** The refusal when an earlier CciInstance of the cluster is bound to `id`. */
  private conflict(obj: CciObject, id: string, ctx: ReconcileContext): BindingRefusal | undefined {
    const claimants = ctx.cache.byIndex(CCI, BOUND_ID_INDEX, id);
    return decideFirstBinder(
      obj,
      id,
      claimants,
      "the CCI instance",
      "CciInstance",
      (o) => (o as CciObject).status?.instanceId === id,
    );
  }

  private async unbound(
    obj: CciObject,
    binding: Extract<Binding, { bound: false }> | BindingRefusal,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult> {
    const gen = obj.metadata?.generation;
    const conditions = withConditions(obj, unboundConditions(binding), ctx.clock.now());
    const before = obj.status?.conditions?.find((c) => c.type === "Bound");
    const status = {
      ...(gen !== undefined ? { observedGeneration: gen } : {}),
      ...lastHandled(obj),
      conditions,
      exportedConfigMapName: obj.spec.exportTo?.configMapName,
    };
    await patchStatus(ctx.kube, CCI, obj, status);
    if (
      before?.reason !== binding.reason ||
      before?.message !== conditionMessage(binding.message)
    ) {
      reasonEvents(ctx.events).warning(obj, binding.reason, binding.message);
    }
    return { requeueAfterMs: this.deps.pollIntervalMs, priority: "low" };
  }

  /** The bound instance no longer exists: keep the binding, say so, keep polling. */
  private async gone(obj: CciObject, id: string, ctx: ReconcileContext): Promise<ReconcileResult> {
    const gen = obj.metadata?.generation;
    const message = `CCI instance ${id} does not exist (any more); the object stays bound to it`;
    const conditions = withConditions(obj, goneConditions(message), ctx.clock.now());
    const wasGone = obj.status?.conditions?.some((c) => c.reason === R.InstanceNotFound);
    await patchStatus(ctx.kube, CCI, obj, {
      ...(obj.status ?? {}),
      instanceId: id,
      ...(gen !== undefined ? { observedGeneration: gen } : {}),
      ...lastHandled(obj),
      conditions,
      exportedConfigMapName: obj.spec.exportTo?.configMapName,
    });
    if (!wasGone) reasonEvents(ctx.events).warning(obj, R.InstanceNotFound, message);
    return { requeueAfterMs: this.deps.pollIntervalMs, priority: "low" };
  }
}
