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
import type { ConnectionSource } from "../connections/registry.js";
import type { ControllerFactory } from "../controller-factory.js";
import { claimedIds } from "../managed/binding.js";
import { EXPORT_RULE } from "../managed/export.js";
import { callsOf } from "../managed/settled.js";
import { BOUND_ID_INDEX } from "../managed/tenancy.js";
import { ATTACHED_STORAGE_SOURCES } from "./attached-storage.js";
import type { SaveBackoff } from "./images.js";
import { CciInstanceReconciler } from "./reconciler.js";
import { type CciAccount, CciSnapshot } from "./snapshot.js";

/** What the controller is built with. */
export interface CciInstanceControllerOptions {
  /** Where each object's account is found (`ControllerDeps.connections`). */
  connections: ConnectionSource;
  /** How often each object is reconciled again (the CciInstance poll interval). */
  pollIntervalMs: number;
  /** How long one walk of the CCI list is reused. Default 90% of the poll interval. */
  snapshotTtlMs?: number;
  /** Delays between attempts of a failed image save. Default 10 s doubling up to 10 min. */
  saveBackoff?: SaveBackoff;
  /** Time source of the snapshot's TTL. Default the system clock. */
  clock?: Clock;
  /** `adoption.namespaces`: where CciInstances may bind at all (the operator creates none). */
  adoptionNamespaces?: readonly string[];
}

/** Default delays between attempts of a failed image save. */
export const DEFAULT_SAVE_BACKOFF: SaveBackoff = { baseMs: 10_000, maxMs: 10 * 60_000 };

/**
 * Builds the CciInstance controller. Each call owns its list snapshots (one per
 * connection, shared by the reconciles of its objects) and its own memory of objects,
 * so two managers in one process do not share state.
 */
export function cciInstanceControllerFrom(
  options: CciInstanceControllerOptions,
): ControllerDefinition {
  const clock = options.clock ?? systemClock;
  const snapshots = new WeakMap<object, CciSnapshot>();
  // A poll of a settled instance is routine observation (the routine budget).
  const connect = (obj: KubeObject, signal: AbortSignal): CciAccount => {
    const { service } = options.connections.forObject(obj);
    let snapshot = snapshots.get(service.account);
    if (!snapshot) {
      snapshot = new CciSnapshot({
        ttlMs: options.snapshotTtlMs ?? Math.floor(options.pollIntervalMs * 0.9),
        now: () => clock.now().getTime(),
      });
      snapshots.set(service.account, snapshot);
    }
    return { service: service.withCall(callsOf(obj, false, signal)), snapshot };
  };
  const reconciler = new CciInstanceReconciler({
    connect,
    pollIntervalMs: options.pollIntervalMs,
    saveBackoff: options.saveBackoff ?? DEFAULT_SAVE_BACKOFF,
    adoptionNamespaces: options.adoptionNamespaces ?? [],
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
  // the CciInstances of its namespace (a detached one no longer names its instance).
  for (const source of ATTACHED_STORAGE_SOURCES) {
    builder.watches(source.resource, (obj, cache) =>
      cache
        .list(cciInstanceCrd, obj.metadata?.namespace ?? "")
        .map((c) => ({ namespace: c.metadata?.namespace ?? "", name: c.metadata?.name ?? "" })),
    );
  }
  return builder
    .onError((key, err, ctx) => reconciler.onError(key, err, ctx))
    .reconcile((key, ctx) => reconciler.reconcile(key, ctx));
}

/** The CciInstance controller factory (registered in src/controllers/index.ts). */
export const cciInstanceController: ControllerFactory = ({ config, connections }) =>
  cciInstanceControllerFrom({
    connections,
    pollIntervalMs: pollIntervalFor(config, "CciInstance"),
    adoptionNamespaces: config.adoption.namespaces,
  });
