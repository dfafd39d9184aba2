/**
 * The one way to declare the controller of a managed kind: {@link managedController}
 * wires the generic loop (reconciler.ts) into the runtime's controller builder, so that
 * a kind's `controller.ts` says only what is its own (its ExternalClient and status,
 * the kinds it refers to, extra indexes and rules).
 */
import { type OperatorConfig, pollIntervalFor } from "../../config/schema.js";
import type { IndexFunc } from "../../runtime/cache.js";
import { type ControllerDefinition, controller, type MapToKeys } from "../../runtime/controller.js";
import type { DeclaredRule } from "../../runtime/permissions.js";
import type { ResourceDescriptor } from "../../runtime/resource.js";
import type { ConnectionSource } from "../connections/registry.js";
import type { ManagedObject } from "./call.js";
import { EXPORT_RULE, SECRET_EXPORT_RULE } from "./export.js";
import type { ManagedKind, ManagedOptions } from "./external-client.js";
import { managedReconciler } from "./reconciler.js";
import { connector, DEFAULT_SUBSCRIPTION_POLL_MS } from "./run.js";
import { BOUND_ID_INDEX, boundIdIndex } from "./tenancy.js";

/** A kind the objects refer to by name; a change of one reconciles the objects `map` names. */
export interface ReferenceWatch {
  readonly resource: ResourceDescriptor;
  readonly map: MapToKeys;
}

/** How a managed kind's controller is built, beyond the kind itself. */
export interface ManagedControllerOptions {
  /** The loop's poll intervals, list visibility window and adoption namespaces. */
  loop: ManagedOptions;
  /** Where each object's connection is found (`ControllerDeps.connections`). */
  connections: ConnectionSource;
  /**
   * The kinds the objects refer to: each is watched (a change of a referenced object
   * reconciles the objects `map` names, so a wait in the kind's reference step,
   * `ManagedKind.resolveReferences`, ends when it should), and read (get, list, watch)
   * with `reason`; the kind's own resource is read already and gets no second rule.
   */
  references?: { readonly watches: readonly ReferenceWatch[]; readonly reason: string };
  /** Indexes on the kind's own cache beyond the one-binder index (`BOUND_ID_INDEX`). */
  indexes?: readonly { readonly name: string; readonly fn: IndexFunc }[];
  /** Rules beyond the loop's own (`managedPermissions`) and the reading of references. */
  permissions?: readonly DeclaredRule[];
}

/**
 * The read rule of each API group among `references` (the own kind left out), with
 * `reason`, granted in the cluster for cluster-scoped kinds (a Role cannot grant them);
 * none when every reference is the kind itself.
 */
function referenceRules(
  own: ResourceDescriptor,
  references: readonly ReferenceWatch[],
  reason: string,
): DeclaredRule[] {
  const byGroup = new Map<string, { group: string; cluster: boolean; plurals: string[] }>();
  for (const { resource } of references) {
    if (resource.group === own.group && resource.plural === own.plural) continue;
    const id = `${resource.group}/${resource.namespaced}`;
    const entry = byGroup.get(id) ?? {
      group: resource.group,
      cluster: !resource.namespaced,
      plurals: [],
    };
    if (!entry.plurals.includes(resource.plural)) entry.plurals.push(resource.plural);
    byGroup.set(id, entry);
  }
  return [...byGroup.values()].map(({ group, cluster, plurals }) => ({
    apiGroups: [group],
    resources: plurals,
    verbs: ["get", "list", "watch"],
    reason,
    ...(cluster ? { grantedIn: "cluster" as const } : {}),
  }));
}

/**
 * The controller of a managed kind, named after it (`NasVolume` → `nasvolume`): the
 * generic loop's reconcile, error policy (Synced=False) and settled judgement
 * (`managedSettled`), the one-binder index, the watches of the referenced kinds, and
 * the rules: the loop's on the kind (`managedPermissions`), reading the referenced
 * kinds, then `options.permissions`, each with its reason.
 */
export function managedController<T extends ManagedObject, R, Refs>(
  kind: ManagedKind<T, R, Refs>,
  options: ManagedControllerOptions,
): ControllerDefinition {
  const own = kind.resource;
  const { reconcile, onError, settled } = managedReconciler(
    kind,
    options.loop,
    connector(kind, options.connections),
  );
  const builder = controller(own.kind.toLowerCase())
    .for(own)
    .index(own, BOUND_ID_INDEX, boundIdIndex(kind));
  for (const { name, fn } of options.indexes ?? []) builder.index(own, name, fn);
  const references = options.references?.watches ?? [];
  for (const { resource, map } of references) builder.watches(resource, map);
  return builder
    .permissions([
      ...managedPermissions(own),
      ...(kind.exportValues ? [EXPORT_RULE] : []),
      ...(kind.exportSecretValues ? [SECRET_EXPORT_RULE] : []),
      ...referenceRules(own, references, options.references?.reason ?? ""),
      ...(options.permissions ?? []),
    ])
    .onError(onError)
    .settled(settled)
    .reconcile(reconcile);
}

/**
 * The loop options of `kind` from the operator config: its poll interval, the first
 * subscription poll (`DEFAULT_SUBSCRIPTION_POLL_MS`, or the poll interval when
 * shorter), the list visibility window (`service.listVisibilityWindowMs` unless
 * `visibilityGraceMs` is given), `adoption.namespaces`, and what bounds how long a
 * create may take effect: `reconcileTimeoutMs` and the kind's request timeout
 * (`service.timeoutMs` unless `requestTimeoutMs` is given).
 */
export function managedLoopOptions(
  config: OperatorConfig,
  kind: string,
  visibilityGraceMs?: number,
  requestTimeoutMs = config.service.timeoutMs,
): ManagedOptions {
  const poll = pollIntervalFor(config, kind);
  return {
    pollIntervalMs: poll,
    subscriptionPollMs: Math.min(DEFAULT_SUBSCRIPTION_POLL_MS, poll),
    visibilityGraceMs: visibilityGraceMs ?? config.service.listVisibilityWindowMs,
    adoptionNamespaces: config.adoption.namespaces,
    recreateLostCreates: config.service.recreateLostCreates,
    reconcileTimeoutMs: config.reconcileTimeoutMs,
    requestTimeoutMs,
  };
}

/**
 * The RBAC rules the generic loop needs on its kind, declared with `.permissions` (the
 * generated RBAC grants what the controllers declare), as kubebuilder's markers declare
 * them: the objects (read, watch, annotation and finalizer writes; never create or
 * delete, since the user owns the objects), the status subresource, and the finalizers
 * subresource (needed where OwnerReferencesPermissionEnforcement is on).
 */
export function managedPermissions(res: { group: string; plural: string }): DeclaredRule[] {
  return [
    {
      apiGroups: [res.group],
      resources: [res.plural],
      verbs: ["get", "list", "watch", "update", "patch"],
      reason: "watch the objects, write annotations and the finalizer",
    },
    {
      apiGroups: [res.group],
      resources: [`${res.plural}/status`],
      verbs: ["get", "update", "patch"],
      reason: "write the status subresource",
    },
    {
      apiGroups: [res.group],
      resources: [`${res.plural}/finalizers`],
      verbs: ["update"],
      reason: "set and remove the finalizer",
    },
  ];
}
