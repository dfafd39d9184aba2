/**
 * The CciInstance controller: observes CCI instances (the service cannot create or
 * delete them), mirrors them into status, reads error details, and saves images.
 * See reconciler.ts for the order of a reconcile and docs/controllers.md for the
 * decisions.
 */

import { pollIntervalFor } from "../../config/schema.js";
import { type CciInstance, cciInstanceCrd } from "../../crds/cciinstance.js";
import {
  type Clock,
  type ControllerDefinition,
  controller,
  type KubeObject,
  systemClock,
} from "../../runtime/index.js";
import type { ControllerDeps } from "../controller-factory.js";
import { callsOf } from "../managed/decisions.js";
import { EXPORT_RULE } from "../managed/export.js";
import { BOUND_ID_INDEX, claimedIds } from "../managed/tenancy.js";
import { ATTACHED_STORAGE_SOURCES, attachedStorageChanges } from "./attached-storage.js";
import type { SaveBackoff } from "./images.js";
import { CciInstanceReconciler } from "./reconciler.js";
import { type CciAccount, CciSnapshot } from "./snapshot.js";

/** Tunables of the CciInstance controller beyond the operator config (tests shorten them). */
export interface CciInstanceControllerOptions {
  /** How long one walk of the CCI list is reused. Default 90% of the poll interval. */
  snapshotTtlMs?: number;
  /** Delays between attempts of a failed image save. Default 10 s doubling up to 10 min. */
  saveBackoff?: SaveBackoff;
  /** Time source of the snapshot's TTL. Default the system clock. */
  clock?: Clock;
}

/** Default delays between attempts of a failed image save. */
export const DEFAULT_SAVE_BACKOFF: SaveBackoff = { baseMs: 10_000, maxMs: 10 * 60_000 };

/**
 * The CciInstance controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it). Each call owns its list
 * snapshots (one per connection, shared by the reconciles of its objects) and its own
 * memory of objects, so two managers in one process do not share state.
 */
export function cciInstanceController(
  deps: ControllerDeps,
  options: CciInstanceControllerOptions = {},
): ControllerDefinition {
  const pollIntervalMs = pollIntervalFor(deps.config, "CciInstance");
  const clock = options.clock ?? systemClock;
  const snapshots = new WeakMap<object, CciSnapshot>();
  // A poll of a settled instance is routine observation (the routine budget), unless
  // the user asked for it (aidc.io/reconcile-requested-at).
  const connect = (obj: KubeObject, signal: AbortSignal, requested = false): CciAccount => {
    const { service } = deps.connections.forObject(obj);
    let snapshot = snapshots.get(service.account);
    if (!snapshot) {
      snapshot = new CciSnapshot({
        ttlMs: options.snapshotTtlMs ?? Math.floor(pollIntervalMs * 0.9),
        now: () => clock.now().getTime(),
      });
      snapshots.set(service.account, snapshot);
    }
    return { service: service.account.withCall(callsOf(obj, requested, signal)).cci, snapshot };
  };
  const reconciler = new CciInstanceReconciler({
    connect,
    pollIntervalMs,
    saveBackoff: options.saveBackoff ?? DEFAULT_SAVE_BACKOFF,
    adoptionNamespaces: deps.config.adoption.namespaces,
  });
  const builder = controller("cciinstance")
    .for(cciInstanceCrd)
    .index(cciInstanceCrd, BOUND_ID_INDEX, (o) =>
      claimedIds(o, (o as unknown as CciInstance).spec?.instanceId),
    )
    .permissions([
      {
        apiGroups: [cciInstanceCrd.group],
        resources: [cciInstanceCrd.plural],
        verbs: ["get", "list", "watch", "patch"],
        reason: "watch the objects, write annotations (the bound id, image saves)",
      },
      {
        apiGroups: [cciInstanceCrd.group],
        resources: [`${cciInstanceCrd.plural}/status`],
        verbs: ["patch"],
        reason: "write the status subresource",
      },
      {
        apiGroups: [cciInstanceCrd.group],
        resources: ATTACHED_STORAGE_SOURCES.map((s) => s.resource.plural),
        verbs: ["get", "list", "watch"],
        reason: "show the BlockVolumes and FileSystems attached to an instance",
      },
      EXPORT_RULE,
    ]);
  // A change of a volume or file system (attached, detached, mounted) shows at once on
  // the CciInstances whose attachedStorage it changes, found by their instance id.
  const boundTo = (id: string) => reconciler.boundTo(id);
  for (const source of ATTACHED_STORAGE_SOURCES) {
    builder.watches(source.resource, attachedStorageChanges(source, boundTo));
  }
  return builder
    .onError((_key, err, ctx, obj) => reconciler.onError(err, ctx, obj))
    .reconcile((key, ctx) => reconciler.reconcile(key, ctx));
}
